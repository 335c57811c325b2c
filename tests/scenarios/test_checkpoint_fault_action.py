"""A scenario file damages its job's checkpoint between two runs of the job.

The step stops the query after batch 0, removes its latest commit (the state a driver
killed between its sink write and its commit leaves) and starts the job again on the
same checkpoint: Spark replays batch 0, so its records reach the sink twice, and the
records seeded after the restart once. The
file names only the fault; the run supplies the checkpoint, which a file written in
advance cannot know.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scenario_support import checked_run

from kafkatest.assertions import DeliveryAssertionError, assert_exactly_once
from kafkatest.scenarios.spec import load_scenario

pytestmark = pytest.mark.spark

SCENARIO = """
name: checkpoint-commit-lost-between-runs
job: kafkatest.scenarios.jobs:copy_stream
topics: {src: 2, sink: 1}
source: src
sink: sink
options: {trigger: 200 milliseconds}
seed: [{label: all, topic: src, count: 8, partition: 0}]
steps:
  - when: {after_batch: 0}
    do:
      - stop_query
      - damage_checkpoint: {fault: crash-before-commit}
      - start_query
      - seed: {label: later, topic: src, count: 4, partition: 0}
expect:
  outcome: continues
  until: {src: {0: 12}}
  delivery: at_least_once
  duplicated: [{seed: all}]
timeout_s: 180
"""


def test_a_scenario_damages_the_checkpoint_between_two_runs(
    spark, kafka_broker, checkpoint_dir: Path, tmp_path: Path
) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO)
    scenario = load_scenario(path)

    result = checked_run(scenario, kafka_broker, spark, checkpoint_dir)

    assert result.actions == [
        "stop_query",
        "damage_checkpoint {'fault': 'crash-before-commit'}",
        "start_query",
        "seed {'label': 'later', 'topic': 'src', 'count': 4, 'partition': 0}",
    ]
    assert (checkpoint_dir / "commits" / "0").exists(), "the second run committed batch 0 again"
    with pytest.raises(DeliveryAssertionError) as replayed:
        assert_exactly_once(result.expected, result.sink_rows)
    assert str(replayed.value).startswith("exactly-once delivery failed: 8 duplicated")
    # The scenario's own delivery report says why, from the checkpoint's logs.
    assert result.delivery is not None
    source = result.topics["src"]
    assert result.delivery.explanation[0] == (
        f"records 0-7 of {source}[0] were written twice: batch 0 was replayed after "
        "commits/0 was deleted (crash-before-commit)"
    ), result.text()
    assert "why:" in result.text()
