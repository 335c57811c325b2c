"""The job's driver is killed between its sink write and its commit, then restarted.

The job runs in its own process. Partition 1's first record is slow (2 s), so the batch's
partition-0 records reach the Kafka sink long before Spark writes commits/0; the
trigger watches the checkpoint (offsets/0 written, commits/0 not) and the sink's
end offset, and SIGKILLs the driver there. The restarted job replays batch 0
from its checkpoint: partition 0's records land twice.
"""

from __future__ import annotations

import pytest
from scenario_support import checked_run

from kafkatest.assertions import DeliveryAssertionError, assert_at_least_once, assert_exactly_once
from kafkatest.jobs import live_members
from kafkatest.scenarios import Expectations, RecordSet, Scenario, SeedSpec, Step

pytestmark = pytest.mark.spark


def crash_between_write_and_commit() -> Scenario:
    return Scenario(
        name="crash-between-sink-write-and-commit",
        job="kafkatest.scenarios.jobs:copy_stream",
        mode="process",
        topics={"src": 2, "sink": 1},
        source="src",
        sink="sink",
        options={"trigger": "availableNow", "slowPartitionMs": "2000"},
        seed=[SeedSpec("p0", "src", 6, partition=0), SeedSpec("p1", "src", 6, partition=1)],
        steps=[
            Step(
                {"sink_written_uncommitted": {"records": 6}},
                [{"kill_job": {}}, {"restart_job": {}}],
            )
        ],
        expect=Expectations(
            outcome="finishes", delivery="at_least_once", duplicated=[RecordSet("p0")]
        ),
        timeout_s=120,
    )


def test_crash_between_sink_write_and_commit_duplicates(kafka_broker, checkpoint_dir) -> None:
    scenario = crash_between_write_and_commit()
    result = checked_run(scenario, kafka_broker, None, checkpoint_dir)

    (firing,) = result.firings
    assert firing.batch_id == 0, "killed inside batch 0, before its commit"
    assert (checkpoint_dir / "commits" / "0").exists(), "the restarted job committed batch 0"
    assert len(result.process_groups) == 2
    for group in result.process_groups:  # both runs' drivers and JVMs are gone
        assert live_members(group) == []

    assert result.delivery is not None and result.delivery.ok  # at-least-once held
    assert_at_least_once(result.expected, result.sink_rows)
    with pytest.raises(DeliveryAssertionError) as failure:
        assert_exactly_once(result.expected, result.sink_rows)
    message = str(failure.value)
    assert message.startswith("exactly-once delivery failed: 6 duplicated")
    assert "id p0-0 from" in message and "seen 2x" in message
    duplicated = {entry.id for entry in failure.value.report.duplicated}
    assert duplicated == {f"p0-{n}" for n in range(6)}, "partition 1 was written once"
