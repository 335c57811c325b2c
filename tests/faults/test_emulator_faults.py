"""Faults only the emulator can inject, each seen by a real librdkafka client."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

import pytest
from confluent_kafka import KafkaError, TopicPartition
from confluent_kafka.admin import OffsetSpec

from kafkatest.brokers.base import Broker
from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.errors import UnsupportedOperation
from kafkatest.faults import Faults, faults_for
from tests.faults.clients import consumer, deliver, producer

pytestmark = pytest.mark.kafka_backends("emulator")


def _values(broker: Broker, topic: str) -> list[bytes | None]:
    return [r.value for r in broker.consume(topic)]


def test_a_retriable_error_is_retried_until_the_write_succeeds(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic()
    kafka_faults.inject_error("Produce", "NOT_LEADER_OR_FOLLOWER", times=2, topic=topic)
    assert [f["kind"] for f in kafka_faults.active()] == ["error"]

    [(err, offset)] = deliver(producer(kafka_broker), topic, [b"x"])

    assert (err, offset) == (None, 0)
    assert kafka_faults.active() == []  # both answers were spent on the retries
    assert _values(kafka_broker, topic) == [b"x"]


def test_a_non_retriable_error_fails_the_write_and_nothing_lands(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic()
    kafka_faults.inject_error("produce", 29, topic=topic)  # TOPIC_AUTHORIZATION_FAILED

    [(err, _offset)] = deliver(producer(kafka_broker), topic, [b"x"])

    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert kafka_broker.latest_offsets(topic) == {0: 0}


def test_an_error_aimed_at_one_partition_leaves_the_others_served(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic(partitions=2)
    deliver(producer(kafka_broker), topic, [b"a", b"b"], partition=0)
    kafka_faults.inject_error("ListOffsets", "TOPIC_AUTHORIZATION_FAILED", topic=topic, partition=1)

    request = {TopicPartition(topic, p): OffsetSpec.latest() for p in (0, 1)}
    futures = kafka_broker.admin().list_offsets(request)

    assert futures[TopicPartition(topic, 0)].result(timeout=10).offset == 2
    with pytest.raises(Exception, match="TOPIC_AUTHORIZATION_FAILED"):
        futures[TopicPartition(topic, 1)].result(timeout=10)


def test_a_consumer_rides_out_retriable_fetch_errors(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic()
    deliver(producer(kafka_broker), topic, [b"a", b"b"])
    kafka_faults.inject_error("Fetch", "NOT_LEADER_OR_FOLLOWER", times=2, topic=topic, partition=0)

    with consumer(kafka_broker) as c:
        c.assign([TopicPartition(topic, 0, 0)])
        got = [_next_value(c), _next_value(c)]

    assert got == [b"a", b"b"]
    assert kafka_faults.active() == []


def test_dropped_connections_are_reconnected_by_the_client(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic()
    errors: list[KafkaError] = []
    kafka_faults.drop_connections("Produce", times=2, topic=topic)

    p = producer(kafka_broker, error_cb=errors.append, **{"enable.idempotence": True})
    [(err, offset)] = deliver(p, topic, [b"x"])

    assert (err, offset) == (None, 0)
    assert kafka_faults.active() == []
    disconnects = (KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN)
    assert any(e.code() in disconnects for e in errors), errors
    assert _values(kafka_broker, topic) == [b"x"]


@pytest.mark.parametrize(("idempotent", "copies"), [(False, 2), (True, 1)])
def test_a_lost_ack_duplicates_only_without_idempotence(
    kafka_broker: Broker,
    kafka_topic: Callable[..., str],
    kafka_faults: Faults,
    idempotent: bool,
    copies: int,
) -> None:
    topic = kafka_topic()
    kafka_faults.lose_produce_acks(times=1, topic=topic)

    p = producer(kafka_broker, **{"enable.idempotence": idempotent})
    [(err, _offset)] = deliver(p, topic, [b"x"])

    assert err is None  # the producer retried after the connection closed
    assert kafka_faults.active() == []  # the ack really was lost once
    assert _values(kafka_broker, topic) == [b"x"] * copies


def test_latency_delays_only_the_api_it_is_set_on(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    slow_topic, fast_topic = kafka_topic(), kafka_topic()
    slow, fast = producer(kafka_broker), producer(kafka_broker)
    deliver(slow, slow_topic, [b"warm-up"])
    deliver(fast, fast_topic, [b"warm-up"])
    kafka_faults.add_latency("Produce", 2000, times=1, topic=slow_topic)
    events: list[str] = []

    slow.produce(slow_topic, b"s", on_delivery=lambda err, msg: events.append("slow"))
    slow.poll(0)
    fast.produce(fast_topic, b"f", on_delivery=lambda err, msg: events.append("fast"))
    while len(events) < 2:
        fast.poll(0.05)
        slow.poll(0.05)

    assert events == ["fast", "slow"]


def test_emulator_faults_say_what_the_backend_would_need(kafka_broker: Broker) -> None:
    faults = faults_for(kafka_broker)
    with pytest.raises(UnsupportedOperation, match="needs a cluster of several brokers"):
        faults.move_leader("any-topic", 0)
    with pytest.raises(UnsupportedOperation, match=r"--emulator-brokers 3, --kafka-brokers 3"):
        faults.stop_broker(1)


@pytest.mark.kafka_backends("kafka")
def test_real_kafka_refuses_emulator_only_faults(kafka_broker: Broker) -> None:
    faults = faults_for(kafka_broker)
    for inject in (
        lambda: faults.inject_error("Produce", "NOT_LEADER_OR_FOLLOWER"),
        lambda: faults.add_latency("Fetch", 100),
        lambda: faults.lose_produce_acks(),
        lambda: faults.drop_connections("Metadata"),
    ):
        with pytest.raises(UnsupportedOperation, match="'kafka' backend"):
            inject()
    with pytest.raises(UnsupportedOperation, match=r"start_broker\('kafka', brokers=3\)"):
        faults.move_leader("t", 0)  # one node: a cluster (brokers=3) can


@pytest.fixture
def three_brokers() -> Iterator[EmulatorBroker]:
    with EmulatorBroker(brokers=3) as broker:
        yield broker


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_clients_follow_a_moved_leader(three_brokers: EmulatorBroker) -> None:
    faults = faults_for(three_brokers)
    three_brokers.create_topic("moving", partitions=1)
    log = logging.getLogger("kafkatest.tests.moving")
    lines = _Lines()
    log.addHandler(lines)
    log.setLevel(logging.DEBUG)
    p = producer(three_brokers, logger=log, debug="msg,metadata")
    assert deliver(p, "moving", [b"one"]) == [(None, 0)]
    leader = _leader(three_brokers, "moving")

    with consumer(three_brokers, **{"auto.offset.reset": "earliest"}) as c:
        c.assign([TopicPartition("moving", 0, 0)])
        assert _next_value(c) == b"one"
        new_leader = faults.move_leader("moving", 0)
        assert new_leader != leader
        assert faults.active() == [
            {
                "kind": "leader_move",
                "topic": "moving",
                "partition": 0,
                "from": leader,
                "to": new_leader,
            }
        ]

        assert deliver(p, "moving", [b"two"]) == [(None, 1)]
        assert any("Not leader for partition" in line for line in lines.lines)
        assert _next_value(c) == b"two"
    assert _leader(three_brokers, "moving") == new_leader

    faults.clear()
    assert _leader(three_brokers, "moving") == leader
    assert faults.active() == []


def _leader(broker: Broker, topic: str) -> int:
    metadata = broker.admin().list_topics(topic=topic, timeout=10)
    return int(metadata.topics[topic].partitions[0].leader)


def _next_value(c: object) -> bytes:
    for _ in range(200):
        msg = c.poll(0.1)  # type: ignore[attr-defined]
        if msg is not None and msg.error() is None:
            return bytes(msg.value())
    raise AssertionError("no record reached the consumer")
