"""Faults that cannot fire, or that name what does not exist, are refused when made.

Topic faults run on every backend (the topic is looked up through the broker's
own metadata on Kafka, without auto-creating it); rule faults exist only on the
emulator. A refused fault leaves nothing behind: no rule, no topic.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from kafkatest.brokers.base import Broker
from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.faults import Faults, faults_for
from kafkatest.faults.validation import MAX_LATENCY_MS, InvalidFault
from kafkatest.records import Record

Call = Callable[[Faults, str], Any]

TOPIC_CASES: list[tuple[str, Call, str]] = [
    (
        "delete_topic of a missing topic",
        lambda f, t: f.delete_topic(t + "-gone"),
        "delete_topic: topic '{t}-gone' does not exist",
    ),
    (
        "add_partitions of a missing topic",
        lambda f, t: f.add_partitions(t + "-gone", 3),
        "add_partitions: topic '{t}-gone' does not exist",
    ),
    (
        "add_partitions that shrinks",
        lambda f, t: f.add_partitions(t, 1),
        "add_partitions: topic '{t}' already has 2 partition(s); total 1 would not be an increase",
    ),
    (
        "add_partitions over the limit",
        lambda f, t: f.add_partitions(t, 1_000_000),
        "add_partitions: total 1000000 is over the limit of 10000",
    ),
    (
        "delete_records on partitions that do not exist",
        lambda f, t: f.delete_records(t, {0: 1, 2: 1, 9: 1}),
        "delete_records: partition(s) [2, 9] do not exist: topic '{t}' has partitions 0..1",
    ),
    (
        "delete_records of a missing topic",
        lambda f, t: f.delete_records(t + "-gone", 1),
        "delete_records: topic '{t}-gone' does not exist",
    ),
    (
        "delete_records below -1",
        lambda f, t: f.delete_records(t, -5),
        "delete_records: before (-1: up to the high watermark) must be at least -1, not -5",
    ),
    (
        "recreate_topic of a missing topic",
        lambda f, t: f.recreate_topic(t + "-gone"),
        "recreate_topic: topic '{t}-gone' does not exist",
    ),
    (
        "recreate_topic with no partitions",
        lambda f, t: f.recreate_topic(t, partitions=0),
        "recreate_topic: partitions must be at least 1, not 0",
    ),
    (
        "compact_now of a missing topic",
        lambda f, t: f.compact_now(t + "-gone"),
        "compact_now: topic '{t}-gone' does not exist",
    ),
    (
        "compact_now up to partitions that do not exist",
        lambda f, t: f.compact_now(t, until={0: 1, 4: 1}),
        "compact_now: partition(s) [4] do not exist: topic '{t}' has partitions 0..1",
    ),
    (
        "compact_now up to a negative offset",
        lambda f, t: f.compact_now(t, until=-3),
        "compact_now: until cannot be negative (-3)",
    ),
    (
        "compact_now without a roll or an end",
        lambda f, t: f.compact_now(t, roll=False),
        "compact_now(roll=False) needs until=",
    ),
    (
        "age_out_records of a missing topic",
        lambda f, t: f.age_out_records(t + "-gone"),
        "age_out_records: topic '{t}-gone' does not exist",
    ),
]


@pytest.mark.parametrize(
    ("call", "message"), [c[1:] for c in TOPIC_CASES], ids=[c[0] for c in TOPIC_CASES]
)
def test_topic_faults_refuse_what_does_not_exist(
    kafka_broker: Broker,
    kafka_topic: Callable[..., str],
    kafka_faults: Faults,
    call: Call,
    message: str,
) -> None:
    topic = kafka_topic(partitions=2)
    kafka_broker.produce([Record(topic=topic, value=b"kept", partition=0)])

    with pytest.raises(InvalidFault) as refused:
        call(kafka_faults, topic)

    assert message.format(t=topic) in str(refused.value)
    # Nothing changed: the topic is as it was, and the missing one was not auto-created.
    assert kafka_broker.partition_count(topic) == 2
    assert kafka_broker.earliest_offsets(topic) == {0: 0, 1: 0}
    assert topic + "-gone" not in kafka_broker.list_topics()


def test_a_missing_topic_is_named_with_the_nearest_existing_one(
    kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic()

    with pytest.raises(InvalidFault, match=f"did you mean '{topic}'"):
        kafka_faults.delete_topic(topic[:-1])


def test_a_valid_fault_still_passes_the_checks(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic(partitions=2)
    kafka_broker.produce([Record(topic=topic, value=b"x", partition=1)] * 3)

    assert kafka_faults.delete_records(topic, {1: 2}) == {1: 2}
    kafka_faults.add_partitions(topic, 3)
    assert kafka_broker.partition_count(topic) == 3


RULE_CASES: list[tuple[str, Call, str]] = [
    (
        "error for a missing topic",
        lambda f, t: f.inject_error("Produce", "NOT_LEADER_OR_FOLLOWER", topic=t + "-gone"),
        "inject_error: topic '{t}-gone' does not exist",
    ),
    (
        "error for a partition out of range",
        lambda f, t: f.inject_error("Fetch", 6, topic=t, partition=2),
        "inject_error: partition 2 does not exist: topic '{t}' has partitions 0..1",
    ),
    (
        "lost acks for a negative partition",
        lambda f, t: f.lose_produce_acks(topic=t, partition=-1),
        "lose_produce_acks: partition -1 does not exist",
    ),
    (
        "latency for a missing topic",
        lambda f, t: f.add_latency("Fetch", 10, topic=t + "-gone"),
        "add_latency: topic '{t}-gone' does not exist",
    ),
    (
        "dropped connections for a partition out of range",
        lambda f, t: f.drop_connections("Produce", topic=t, partition=7),
        "drop_connections: partition 7 does not exist",
    ),
    (
        "a partition without its topic",
        lambda f, t: f.inject_error("Fetch", 6, partition=0),
        "inject_error: a partition needs its topic",
    ),
    (
        "a latency longer than any test waits",
        lambda f, t: f.add_latency("Fetch", MAX_LATENCY_MS + 1),
        f"add_latency: delay_ms {MAX_LATENCY_MS + 1} is over the limit of {MAX_LATENCY_MS}",
    ),
    (
        "a negative latency",
        lambda f, t: f.add_latency("Fetch", -1),
        "add_latency: delay_ms cannot be negative (-1)",
    ),
    (
        "times zero",
        lambda f, t: f.drop_connections("Fetch", times=0),
        "drop_connections: times must be at least 1",
    ),
    (
        "negative times",
        lambda f, t: f.inject_error("Produce", 6, times=-3),
        "inject_error: times must be at least 1",
    ),
    (
        "an unknown API name",
        lambda f, t: f.inject_error("Prodcue", 6),
        "unknown Kafka API 'Prodcue' (did you mean Produce?",
    ),
    (
        "an unknown API key",
        lambda f, t: f.add_latency(999, 5),
        "unknown Kafka API key 999",
    ),
    (
        "an API the emulator does not serve",
        lambda f, t: f.inject_error("Vote", 6),  # KRaft controllers' own API
        "the emulator does not serve Vote (API key 52)",
    ),
    (
        "an unknown error name",
        lambda f, t: f.inject_error("Produce", "NOT_LEADER"),
        "unknown Kafka error 'NOT_LEADER' (did you mean NOT_LEADER_OR_FOLLOWER?",
    ),
    (
        "an unknown error code",
        lambda f, t: f.inject_error("Produce", 12345),
        "unknown Kafka error 12345",
    ),
    (
        "error NONE",
        lambda f, t: f.inject_error("Produce", "NONE"),
        "inject_error: error NONE (0) is a success, not a fault",
    ),
    (
        "a topic on an API whose requests name none",
        lambda f, t: f.inject_error("ApiVersions", 6, topic=t),
        "ApiVersions requests do not name topics, so a rule for topic '{t}' would never fire",
    ),
    (
        "a partition on an API whose requests name only topics",
        lambda f, t: f.inject_error("Metadata", 3, topic=t, partition=0),
        "Metadata requests name topics but not partitions",
    ),
    (
        "a negative clock step",
        lambda f, t: f.advance_clock(-1),
        "advance_clock: ms cannot be negative (-1)",
    ),
]


@pytest.mark.kafka_backends("emulator")
@pytest.mark.parametrize(
    ("call", "message"), [c[1:] for c in RULE_CASES], ids=[c[0] for c in RULE_CASES]
)
def test_rules_that_could_never_fire_are_refused(
    kafka_broker: Broker,
    kafka_topic: Callable[..., str],
    kafka_faults: Faults,
    call: Call,
    message: str,
) -> None:
    topic = kafka_topic(partitions=2)

    with pytest.raises(InvalidFault) as refused:
        call(kafka_faults, topic)

    assert message.format(t=topic) in str(refused.value)
    assert kafka_faults.active() == []
    assert topic + "-gone" not in kafka_broker.list_topics()


@pytest.mark.kafka_backends("emulator")
def test_rules_that_can_fire_are_installed(
    kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic(partitions=2)

    kafka_faults.inject_error("Fetch", "NOT_LEADER_OR_FOLLOWER", topic=topic, partition=1)
    kafka_faults.inject_error("Metadata", 3, topic=topic)
    kafka_faults.add_latency("ListOffsets", MAX_LATENCY_MS, times=1)
    kafka_faults.lose_produce_acks(times=None, topic=topic)

    assert [f["api"] for f in kafka_faults.active()] == [
        "Fetch",
        "Metadata",
        "ListOffsets",
        "Produce",
    ]


def test_leader_moves_to_nowhere_are_refused() -> None:
    with EmulatorBroker(brokers=3) as broker:
        broker.create_topic("moved", partitions=2)
        faults = faults_for(broker)
        for call, message in [
            (lambda: faults.move_leader("moved", 5), "move_leader: partition 5 does not exist"),
            (lambda: faults.move_leader("mvoed", 0), "did you mean 'moved'?"),
            (lambda: faults.move_leader("moved", 0, 7), "there is no broker 7; brokers are"),
        ]:
            with pytest.raises(InvalidFault, match=re.escape(message)):
                call()
        assert faults.active() == []
