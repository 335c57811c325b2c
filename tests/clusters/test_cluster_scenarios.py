"""A streaming query over a three-broker cluster, on both backends: partition leaders
move under it, then the broker leading its source goes down and comes back.

Spark's executors (Java consumers) refresh metadata on NOT_LEADER_OR_FOLLOWER,
validate their position at the new leader (OffsetForLeaderEpoch) and read on; the
sink's producer follows its partition's leader. The sink is at-least-once: every
seeded record must be there, duplicates allowed. Topics are replicated to all
three brokers (the cluster's default.replication.factor), so losing one loses
nothing.
"""

from __future__ import annotations

import pytest

from kafkatest import Broker
from kafkatest.scenarios import Expectations, Scenario, SeedSpec, Step
from tests.scenarios.scenario_support import QUICK, checked_run

pytestmark = pytest.mark.spark

PARTITIONS = 3


def seeds(label: str) -> list[dict]:
    """The records that release the next batch (minOffsetsPerTrigger in QUICK)."""
    return [
        {"seed": {"label": f"{label}-{p}", "topic": "src", "count": 8, "partition": p}}
        for p in range(PARTITIONS)
    ]


def streaming(name: str, steps: list[Step]) -> Scenario:
    return Scenario(
        name=name,
        job="kafkatest.scenarios.jobs:copy_stream",
        topics={"src": PARTITIONS, "sink": 1},
        source="src",
        sink="sink",
        options=dict(QUICK),
        seed=[SeedSpec(f"first-{p}", "src", 4, partition=p) for p in range(PARTITIONS)],
        steps=steps,
        expect=Expectations(
            outcome="continues",
            until={"src": dict.fromkeys(range(PARTITIONS), 20)},
            delivery="at_least_once",
        ),
        timeout_s=120,
    )


def move_every_leader(label: str) -> list[dict]:
    moves: list[dict] = [{"move_leader": {"topic": "src", "partition": p}} for p in range(3)]
    moves.append({"move_leader": {"topic": "sink", "partition": 0}})
    return moves + seeds(label)


def test_query_reads_on_across_leader_moves(
    spark, three_broker_cluster: Broker, checkpoint_dir, monkeypatch
) -> None:
    elections: list[tuple[str, int, int]] = []  # (topic, partition, new epoch), emulator
    if three_broker_cluster.backend == "emulator":
        state = three_broker_cluster.state  # type: ignore[attr-defined]
        move = state.move_leader

        def recorded(topic: str, partition: int, leader_id: int) -> tuple[int, int]:
            old, epoch = move(topic, partition, leader_id)
            elections.append((topic, partition, epoch))
            return old, epoch

        monkeypatch.setattr(state, "move_leader", recorded)
    scenario = streaming(
        "leaders-move-mid-stream",
        [
            Step({"after_batch": 0}, move_every_leader("moved-once")),
            Step({"after_batch": 1}, move_every_leader("moved-twice")),
        ],
    )
    result = checked_run(scenario, three_broker_cluster, spark, checkpoint_dir)

    assert [f.batch_id for f in result.firings[:2]] == [0, 1]
    assert result.delivery is not None and result.delivery.counts()["missing"] == 0
    if three_broker_cluster.backend == "emulator":
        src, sink = result.topics["src"], result.topics["sink"]
        # Each move was an election: every partition led in epoch 1, then 2.
        assert sorted(elections) == sorted(
            [(src, p, e) for p in range(PARTITIONS) for e in (1, 2)] + [(sink, 0, 1), (sink, 0, 2)]
        )


def test_query_reads_on_when_its_source_leader_broker_goes_down(
    spark, three_broker_cluster: Broker, checkpoint_dir
) -> None:
    scenario = streaming(
        "source-leader-broker-lost-mid-stream",
        [
            Step(
                {"after_batch": 0},
                [{"stop_one_broker": {"leader_of": "src", "partition": 0}}, *seeds("one-down")],
            ),
            Step({"after_batch": 1}, [{"start_one_broker": {}}, *seeds("all-back")]),
        ],
    )
    result = checked_run(scenario, three_broker_cluster, spark, checkpoint_dir)

    assert [f.batch_id for f in result.firings[:2]] == [0, 1]
    assert result.delivery is not None and result.delivery.counts()["missing"] == 0
    done = " ".join(result.actions)
    assert "stop_one_broker" in done and "start_one_broker" in done, result.actions
