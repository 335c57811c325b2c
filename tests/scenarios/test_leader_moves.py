"""Partition leaders move under a running query on a three-broker emulator: nothing is lost.

Each move is an election: the partition's leader epoch goes up, the old leader
answers NOT_LEADER_OR_FOLLOWER and a stale epoch is fenced. Spark's executors
(Java consumers) refresh metadata, validate their position with OffsetForLeaderEpoch
at the new leader and read on; the sink's producer follows its partition's leader.
Every source partition and the sink move after batch 0 and again after batch 1.
The sink is at-least-once: every seeded record must be there, duplicates allowed.

Emulator only, on its own broker: leaders move only between emulated brokers
(real Kafka here is one node, and the session's emulator has one broker).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from scenario_support import QUICK, checked_run

from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.scenarios import Expectations, Scenario, SeedSpec, Step

pytestmark = pytest.mark.spark

PARTITIONS = 3


@pytest.fixture(scope="module")
def three_brokers() -> Iterator[EmulatorBroker]:
    with EmulatorBroker(brokers=3) as broker:  # started here, closed (faults and all) at exit
        yield broker


def move_every_leader(label: str) -> list[dict]:
    """Move src's partitions and the sink's, then write the records that release a batch."""
    moves: list[dict] = [{"move_leader": {"topic": "src", "partition": p}} for p in range(3)]
    moves.append({"move_leader": {"topic": "sink", "partition": 0}})
    seeds = [
        {"seed": {"label": f"{label}-{p}", "topic": "src", "count": 8, "partition": p}}
        for p in range(PARTITIONS)
    ]
    return moves + seeds


def leaders_moving() -> Scenario:
    return Scenario(
        name="leaders-move-mid-stream",
        job="kafkatest.scenarios.jobs:copy_stream",
        topics={"src": PARTITIONS, "sink": 1},
        source="src",
        sink="sink",
        options=dict(QUICK),
        seed=[SeedSpec(f"first-{p}", "src", 4, partition=p) for p in range(PARTITIONS)],
        steps=[
            Step({"after_batch": 0}, move_every_leader("moved-once")),
            Step({"after_batch": 1}, move_every_leader("moved-twice")),
        ],
        expect=Expectations(
            outcome="continues",
            until={"src": dict.fromkeys(range(PARTITIONS), 20)},
            delivery="at_least_once",
        ),
        timeout_s=90,
    )


def test_query_reads_on_across_leader_moves(
    spark, three_brokers, checkpoint_dir, monkeypatch
) -> None:
    state = three_brokers.state
    elections: list[tuple[str, int, int]] = []  # (topic, partition, new epoch)
    move = state.move_leader

    def recorded(topic: str, partition: int, leader_id: int) -> tuple[int, int]:
        old, epoch = move(topic, partition, leader_id)
        elections.append((topic, partition, epoch))
        return old, epoch

    monkeypatch.setattr(state, "move_leader", recorded)
    result = checked_run(leaders_moving(), three_brokers, spark, checkpoint_dir)

    assert [f.batch_id for f in result.firings[:2]] == [0, 1]
    assert result.delivery is not None and result.delivery.counts()["missing"] == 0
    src, sink = result.topics["src"], result.topics["sink"]
    # Each move was an election: every partition led in epoch 1, then 2.
    assert sorted(elections) == sorted(
        [(src, p, e) for p in range(PARTITIONS) for e in (1, 2)] + [(sink, 0, 1), (sink, 0, 2)]
    )
