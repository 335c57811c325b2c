"""librdkafka (confluent-kafka) against the emulator: producer, consumer, admin."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    ConfigResource,
    NewTopic,
    OffsetSpec,
)

from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.errors import BrokerError
from kafkatest.records import Record


def _assign_consume(
    bootstrap: str, topic: str, partition: int, start: int, count: int
) -> list[object]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "assign-only",
            "enable.auto.commit": False,
            "auto.offset.reset": "error",
        }
    )
    try:
        consumer.assign([TopicPartition(topic, partition, start)])
        messages: list[object] = []
        deadline = time.monotonic() + 20
        while len(messages) < count and time.monotonic() < deadline:
            for msg in consumer.consume(num_messages=count, timeout=0.5):
                assert msg.error() is None, msg.error()
                messages.append(msg)
        return messages
    finally:
        consumer.close()


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_idempotent_producer_round_trips_every_codec_byte_exactly(
    emulator: EmulatorBroker, topic: str, codec: str
) -> None:
    producer = Producer(
        {
            "bootstrap.servers": emulator.bootstrap_servers,
            "enable.idempotence": True,
            "compression.type": codec,
            "linger.ms": 20,
        }
    )
    sent = [
        (
            f"key-{i}".encode(),
            bytes([i % 256]) * (i % 50) + b"v",
            [("h", bytes([i % 7]))],
            1_000 + i,
        )
        for i in range(500)
    ]
    sent.append((None, None, [("null-header", None)], 2_000))
    for key, value, headers, ts in sent:
        producer.produce(topic, value=value, key=key, headers=headers, timestamp=ts, partition=0)
    assert producer.flush(20) == 0
    messages = _assign_consume(emulator.bootstrap_servers, topic, 0, 0, len(sent))
    got = [(m.key(), m.value(), m.headers() or [], m.timestamp()[1]) for m in messages]
    assert [m.offset() for m in messages] == list(range(len(sent)))
    assert got == [(k, v, h, ts) for k, v, h, ts in sent]


def test_consumer_starts_mid_batch_and_skips_earlier_records(
    emulator: EmulatorBroker, topic: str
) -> None:
    emulator.produce([Record.make(topic, f"v{i}", partition=0) for i in range(20)])
    messages = _assign_consume(emulator.bootstrap_servers, topic, 0, 13, 7)
    assert [m.offset() for m in messages] == list(range(13, 20))
    assert messages[0].value() == b"v13"


def test_out_of_range_offset_is_reported_to_the_consumer(
    emulator: EmulatorBroker, topic: str
) -> None:
    emulator.produce([Record.make(topic, "only", partition=0)])
    consumer = Consumer(
        {
            "bootstrap.servers": emulator.bootstrap_servers,
            "group.id": "assign-only",
            "auto.offset.reset": "error",
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, 0, 50)])
        deadline = time.monotonic() + 10
        error = None
        while error is None and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is not None:
                error = msg.error()
        assert error is not None and error.code() == KafkaError._AUTO_OFFSET_RESET
    finally:
        consumer.close()


def test_admin_topics_partitions_and_configs(
    emulator: EmulatorBroker, new_topic: Callable[[], str]
) -> None:
    name = new_topic()
    emulator.create_topic(name, partitions=2, config={"retention.ms": 1234})
    assert emulator.partition_count(name) == 2
    config = emulator.topic_config(name)
    assert config["retention.ms"] == "1234"
    assert config["cleanup.policy"] == "delete"
    emulator.alter_topic_config(name, {"message.timestamp.type": "LogAppendTime"})
    assert emulator.topic_config(name)["message.timestamp.type"] == "LogAppendTime"
    emulator.add_partitions(name, 5)
    assert emulator.partition_count(name) == 5
    with pytest.raises(BrokerError, match=r"already exists|TOPIC_ALREADY_EXISTS"):
        emulator.create_topic(name)
    emulator.delete_topic(name)
    assert name not in emulator.list_topics()


def test_admin_errors_match_kafka(emulator: EmulatorBroker, new_topic: Callable[[], str]) -> None:
    admin = AdminClient({"bootstrap.servers": emulator.bootstrap_servers})
    bad_config = new_topic()
    futures = admin.create_topics(
        [
            NewTopic(bad_config, 1, 1, config={"no.such.config": "1"}),
            NewTopic("bad/name", 1, 1),
            NewTopic(new_topic(), 1, 3),
        ]
    )
    codes = []
    for future in futures.values():
        with pytest.raises(Exception) as failure:
            future.result(10)
        codes.append(failure.value.args[0].code())
    assert codes == [
        KafkaError.INVALID_CONFIG,
        KafkaError.TOPIC_EXCEPTION,
        KafkaError.INVALID_REPLICATION_FACTOR,
    ]
    resource = ConfigResource(ConfigResource.Type.TOPIC, "never-created")
    with pytest.raises(Exception) as missing:
        admin.describe_configs([resource])[resource].result(10)
    assert missing.value.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_delete_records_and_list_offsets(emulator: EmulatorBroker, topic: str) -> None:
    # Recent timestamps: records stamped in 1970 are past retention, and the
    # retention check (every 500 ms) may delete them mid-test.
    base = int(time.time() * 1000) - 60_000
    placed = emulator.produce(
        [Record.make(topic, f"v{i}", partition=0, timestamp_ms=base + 10 * i) for i in range(10)]
    )
    assert [r.offset for r in placed] == list(range(10))
    assert emulator.delete_records(topic, {0: 4}) == {0: 4}
    assert emulator.earliest_offsets(topic) == {0: 4}
    assert emulator.latest_offsets(topic) == {0: 10}
    assert [r.offset for r in emulator.consume(topic)] == list(range(4, 10))

    admin = emulator.admin()
    tp = TopicPartition(topic, 0)

    def offset_for(spec: OffsetSpec) -> tuple[int, int]:
        result = admin.list_offsets({tp: spec})[tp].result(10)
        return result.offset, result.timestamp

    assert offset_for(OffsetSpec.for_timestamp(base + 45)) == (5, base + 50)
    assert offset_for(OffsetSpec.for_timestamp(base + 99_999))[0] == -1
    assert offset_for(OffsetSpec.max_timestamp()) == (9, base + 90)
    assert emulator.delete_records(topic, {0: -1}) == {0: 10}
    assert emulator.consume(topic) == []


def test_log_append_time_topics_stamp_the_broker_time(
    emulator: EmulatorBroker, new_topic: Callable[[], str]
) -> None:
    name = new_topic()
    emulator.create_topic(name, config={"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    placed = emulator.produce([Record.make(name, "x", timestamp_ms=5, partition=0)])
    got = emulator.consume(name)
    assert got[0].timestamp_ms is not None and got[0].timestamp_ms >= before
    assert placed[0].timestamp_ms == got[0].timestamp_ms


def test_message_too_large_is_refused(
    emulator: EmulatorBroker, new_topic: Callable[[], str]
) -> None:
    name = new_topic()
    emulator.create_topic(name, config={"max.message.bytes": 200})
    producer = Producer({"bootstrap.servers": emulator.bootstrap_servers, "linger.ms": 0})
    errors: list[KafkaError] = []
    producer.produce(name, value=b"x" * 500, partition=0, on_delivery=lambda e, m: errors.append(e))
    producer.flush(10)
    assert errors and errors[0].code() == KafkaError.MSG_SIZE_TOO_LARGE
    assert emulator.latest_offsets(name) == {0: 0}


def test_unknown_topic_is_auto_created_by_producers(
    emulator: EmulatorBroker, new_topic: Callable[[], str]
) -> None:
    name = new_topic()
    placed = emulator.produce([Record.make(name, "auto")])
    assert placed[0].offset == 0
    assert name in emulator.list_topics()


def test_recreated_topic_is_empty_with_a_new_id(
    emulator: EmulatorBroker, new_topic: Callable[[], str]
) -> None:
    name = new_topic()
    emulator.create_topic(name)
    emulator.produce([Record.make(name, "old", partition=0)])
    first_id = emulator.call(lambda: emulator.state.topics.get(name).topic_id)
    emulator.delete_topic(name)
    emulator.create_topic(name)
    assert emulator.latest_offsets(name) == {0: 0}
    assert emulator.call(lambda: emulator.state.topics.get(name).topic_id) != first_id
    emulator.produce([Record.make(name, "new", partition=0)])
    assert [r.value for r in emulator.consume(name)] == [b"new"]
