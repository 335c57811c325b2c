"""The broker restarts, then pauses, under a running streaming query: nothing is lost.

A broker outage is not data loss: Spark's AdminClient, its executors' consumers
and the sink's producer reconnect and retry, and the query goes on. After batch 0
the broker restarts (data kept) while the query waits for the next records; the
release records are written once it is back. After batch 1 more records are
written and the broker freezes for 3 s (real Kafka: SIGSTOP) while the query
plans and reads them. The Kafka sink is at-least-once, so the check is that every
seeded record reached the sink, duplicates allowed.

`kafkaConsumer.pollTimeoutMs` is raised above the pause: a fetch that waits out a
frozen broker must not end the task ("Cannot fetch record ... in N milliseconds"),
which would fail the query under local mode's single task attempt.
"""

from __future__ import annotations

import pytest
from scenario_support import QUICK, checked_run

from kafkatest.scenarios import Expectations, Scenario, SeedSpec, Step

pytestmark = pytest.mark.spark


def broker_outages() -> Scenario:
    return Scenario(
        name="broker-restart-and-pause-mid-stream",
        job="kafkatest.scenarios.jobs:copy_stream",
        topics={"src": 2, "sink": 1},
        source="src",
        sink="sink",
        options={**QUICK, "kafkaConsumer.pollTimeoutMs": "30000"},
        seed=[SeedSpec("first-0", "src", 5, partition=0), SeedSpec("first-1", "src", 5, 1)],
        steps=[
            Step(
                {"after_batch": 0},
                [
                    {"restart": {}},
                    {"seed": {"label": "after-restart", "topic": "src", "count": 20}},
                ],
            ),
            Step(
                {"after_batch": 1},
                [
                    {"seed": {"label": "paused-0", "topic": "src", "count": 10}},
                    {"seed": {"label": "paused-1", "topic": "src", "count": 10, "partition": 1}},
                    {"pause": {}},
                    {"wait": {"seconds": 3}},
                    {"resume": {}},
                ],
            ),
        ],
        expect=Expectations(
            outcome="continues", until={"src": {0: 35, 1: 15}}, delivery="at_least_once"
        ),
        timeout_s=90,
    )


def test_query_survives_broker_restart_and_pause(
    spark, kafka_broker, kafka_faults, checkpoint_dir
) -> None:
    result = checked_run(broker_outages(), kafka_broker, spark, checkpoint_dir)
    assert [f.batch_id for f in result.firings[:2]] == [0, 1]
    assert result.delivery is not None and result.delivery.ok
    assert result.delivery.counts()["missing"] == 0
    assert kafka_faults.active() == [], "the broker is running and answering again"
