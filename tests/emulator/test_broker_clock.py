"""`kafka_broker.clock`: the emulator's time, stopped and moved by the test.

Each test would fail with the clock ignored: a timestamp would be the wall time, a
segment would outlive its retention, a transaction would stay open and a silent
member would stay in its group. On the `kafka` backend the clock is refused with
what to do instead.
"""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, IsolationLevel, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec
from group_wire import Session, new_member, ready_session

from kafkatest import Broker
from kafkatest.clocks import duration_ms
from kafkatest.errors import UnsupportedOperation

TIMEOUT_S = 30
emulator_only = pytest.mark.kafka_backends("emulator")


def produce(broker: Broker, topic: str, values: list[bytes], **config: object) -> None:
    producer = Producer({**broker.client_config(), **config})
    for value in values:
        producer.produce(topic, value, partition=0)
    assert producer.flush(TIMEOUT_S) == 0


def timestamps(broker: Broker, topic: str, count: int) -> list[int]:
    consumer = Consumer(
        {
            **broker.client_config(),
            "group.id": f"g-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    try:
        messages = consumer.consume(count, timeout=TIMEOUT_S)
    finally:
        consumer.close()
    assert len(messages) == count
    return [message.timestamp()[1] for message in messages]


@emulator_only
def test_a_frozen_clock_stamps_log_append_time(kafka_broker: Broker, kafka_topic) -> None:
    topic = kafka_topic(config={"message.timestamp.type": "LogAppendTime"})
    clock = kafka_broker.clock
    frozen = clock.freeze()
    try:
        produce(kafka_broker, topic, [b"one"])
        produce(kafka_broker, topic, [b"two"])
        assert clock.advance(hours=1) == frozen + duration_ms(hours=1)
        produce(kafka_broker, topic, [b"an hour later"])
        assert timestamps(kafka_broker, topic, 3) == [frozen, frozen, frozen + 3_600_000]
    finally:
        clock.resume()


@emulator_only
def test_advance_deletes_what_outlived_retention_at_once(kafka_broker: Broker, kafka_topic) -> None:
    topic = kafka_topic(config={"retention.ms": str(duration_ms(hours=1))})
    produce(kafka_broker, topic, [b"a", b"b", b"c"])
    assert kafka_broker.earliest_offsets(topic) == {0: 0}
    kafka_broker.clock.advance(hours=1, minutes=10)  # past retention and its check interval
    assert kafka_broker.earliest_offsets(topic) == {0: 3}


@emulator_only
def test_advance_aborts_a_transaction_past_its_timeout(kafka_broker: Broker, kafka_topic) -> None:
    topic = kafka_topic()
    producer = Producer(
        {
            **kafka_broker.client_config(),
            "transactional.id": f"clock-{uuid.uuid4().hex[:8]}",
            "transaction.timeout.ms": 60_000,
        }
    )
    producer.init_transactions(TIMEOUT_S)
    producer.begin_transaction()
    producer.produce(topic, b"left open", partition=0)
    assert producer.flush(TIMEOUT_S) == 0
    assert stable_offset(kafka_broker, topic) == 0  # the open transaction holds it back
    kafka_broker.clock.advance(minutes=2)
    assert stable_offset(kafka_broker, topic) == 2  # the record and its abort marker


def stable_offset(broker: Broker, topic: str) -> int:
    admin = AdminClient(broker.client_config())
    partition = TopicPartition(topic, 0)
    answers = admin.list_offsets(
        {partition: OffsetSpec.latest()}, isolation_level=IsolationLevel.READ_COMMITTED
    )
    return answers[partition].result(TIMEOUT_S).offset


@emulator_only
def test_advance_removes_a_silent_member_of_a_consumer_group(
    kafka_broker: Broker, kafka_topic
) -> None:
    topic, group = kafka_topic(), f"clock-{uuid.uuid4().hex[:8]}"
    session: Session = ready_session(kafka_broker, group)
    try:
        member = new_member()
        joined = session.heartbeat(group, member, 0, subscribed_topic_names=(topic,))
        assert joined.member_epoch == 2  # a new group starts at epoch 1 (Kafka 4.3)
        assert members(kafka_broker, group) == 1
        kafka_broker.clock.advance(seconds=46)  # past the 45 s session, no heartbeat
        assert members(kafka_broker, group) == 0
    finally:
        session.close()


def members(broker: Broker, group: str) -> int:
    admin = AdminClient(broker.client_config())
    described = admin.describe_consumer_groups([group])[group].result(TIMEOUT_S)
    return len(described.members)


@pytest.mark.kafka_backends("kafka")
def test_the_kafka_backend_refuses_the_clock_and_says_what_to_do(kafka_broker: Broker) -> None:
    with pytest.raises(UnsupportedOperation, match=r"machine's clock.*emulator only"):
        kafka_broker.clock  # noqa: B018


@emulator_only
def test_a_bad_duration_is_refused_before_the_clock_moves(kafka_broker: Broker) -> None:
    clock = kafka_broker.clock
    with pytest.raises(ValueError, match="forward"):
        clock.advance(minutes=-1)
    with pytest.raises(ValueError, match="100 years"):
        clock.advance(days=365 * 200)
    with pytest.raises(TypeError, match="number"):
        clock.advance(seconds="5")  # type: ignore[arg-type]
