"""Four classic consumers joining one new group land in one generation.

Kafka's group.initial.rebalance.delay.ms makes the coordinator hold a new (empty)
group's first join for that long, extended by each member that arrives meanwhile
(up to the rebalance timeout), so members that start together share the first
generation instead of each starting a rebalance of its own. kafkatest runs real
Kafka with a delay of 0 (quick tests); here both backends get 3000 ms by the same
Kafka property, and every consumer must see exactly one assignment: one partition,
never revoked.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer


@pytest.mark.kafka_broker_config({"group.initial.rebalance.delay.ms": 3000})
def test_four_consumers_starting_together_share_the_first_generation(kafka_broker, kafka_topic):
    four_consumers_share_the_first_generation(kafka_broker, kafka_topic)


def test_with_the_default_delay_of_0_too(kafka_broker, kafka_topic):
    """kafkatest's default (0): Kafka completes a new group's first join on its timer,
    after the joins already in flight, and the emulator holds it for a short window
    counted from the group's first coordinator lookup, so consumers started together
    mostly share the first generation (about 0.08-0.1 s for four, BENCHMARKS.md). That
    depends on how fast the four start (Kafka splits a third of such joins), so either
    broker may need another rebalance: what holds on both is that the group settles
    with one partition each."""
    warm_up = f"warm-{time.monotonic_ns()}"  # Kafka's first group creates __consumer_offsets
    first = Consumer({"bootstrap.servers": kafka_broker.bootstrap_servers, "group.id": warm_up})
    first.subscribe([kafka_topic()])
    deadline = time.monotonic() + 60
    while not first.assignment() and time.monotonic() < deadline:
        first.poll(0.05)
    first.close()
    rounds, _revoked = four_consumers_join(kafka_broker, kafka_topic)
    latest = [r[-1] for r in rounds.values() if r]
    assert len(latest) == 4 and sorted(p for r in latest for p in r) == [0, 1, 2, 3], rounds


def four_consumers_share_the_first_generation(kafka_broker, kafka_topic) -> None:
    rounds, revoked_before_close = four_consumers_join(kafka_broker, kafka_topic)
    assert all(len(r) == 1 for r in rounds.values()), rounds
    assert sorted(p for r in rounds.values() for p in r[0]) == [0, 1, 2, 3]
    assert all(len(r[0]) == 1 for r in rounds.values()), rounds
    assert all(n == 0 for n in revoked_before_close.values()), revoked_before_close


def four_consumers_join(
    kafka_broker, kafka_topic
) -> tuple[dict[int, list[list[int]]], dict[int, int]]:
    """Four consumers of a new group, started together: every assignment each one got,
    and how often each was revoked before closing."""
    topic = kafka_topic(partitions=4)
    group = f"join-{time.monotonic_ns()}"
    rounds: dict[int, list[list[int]]] = {i: [] for i in range(4)}
    revoked: dict[int, int] = {i: 0 for i in range(4)}

    def consumer(index: int) -> Consumer:
        c = Consumer(
            {
                "bootstrap.servers": kafka_broker.bootstrap_servers,
                "group.id": group,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )

        def on_assign(_c: Consumer, parts: list) -> None:
            rounds[index].append(sorted(p.partition for p in parts))

        def on_revoke(_c: Consumer, _parts: list) -> None:
            revoked[index] += 1

        c.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
        return c

    consumers = [consumer(i) for i in range(4)]
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(rounds.values()):
            for c in consumers:
                c.poll(0.05)
        # Keep polling a little: a second rebalance would show as a revoke/assign.
        settle = time.monotonic() + 2
        while time.monotonic() < settle:
            for c in consumers:
                c.poll(0.05)
        revoked_before_close = dict(revoked)  # close() revokes, which is not a rebalance
    finally:
        for c in consumers:
            c.close()
    return rounds, revoked_before_close


def test_the_initial_rebalance_delay_is_a_broker_setting_on_the_emulator() -> None:
    """Both backends read group.initial.rebalance.delay.ms; the emulator reports it."""
    from kafkatest.brokers.config import emulator_settings
    from kafkatest.emulator.state.broker_configs import kafka_settings

    settings = emulator_settings({"group.initial.rebalance.delay.ms": 250})
    assert settings.group_initial_rebalance_delay_ms == 250
    assert kafka_settings(settings)["group.initial.rebalance.delay.ms"] == "250"
    assert emulator_settings(None).group_initial_rebalance_delay_ms == 0
