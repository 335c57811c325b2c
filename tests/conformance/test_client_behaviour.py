"""What a client observes, asserted identically on every backend.

Run with ``--kafka-backend=emulator,kafka``: each test runs on the emulator and on
real Apache Kafka, and the expected values are Kafka's. A difference is an emulator bug.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import NewPartitions, NewTopic

from kafkatest import Broker, Record

NOW_MS = (int(time.time()) - 600) * 1000


def read_all(broker: Broker, topic: str, **config: object) -> list:
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "group.id": "conformance",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "enable.partition.eof": True,
            **config,
        }
    )
    partitions = broker.partition_count(topic)
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out, eof = [], set()
    deadline = time.monotonic() + 30
    while len(eof) < partitions and time.monotonic() < deadline:
        for msg in consumer.consume(1000, timeout=0.5):
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    eof.add(msg.partition())
                    continue
                consumer.close()
                raise KafkaException(msg.error())
            out.append(msg)
    consumer.close()
    return sorted(out, key=lambda m: (m.partition(), m.offset()))


def test_bytes_keys_headers_timestamps_round_trip(kafka_broker: Broker, kafka_topic) -> None:
    topic = kafka_topic(partitions=2)
    sent = [
        Record(topic, None, key=b"k-null-value", partition=0, timestamp_ms=NOW_MS),
        Record(topic, b"", key=None, partition=0, timestamp_ms=NOW_MS + 1),
        Record(topic, bytes(range(256)), key=b"\x00\xff", partition=1, timestamp_ms=NOW_MS + 2),
        Record(
            topic,
            b"v",
            key=b"k",
            headers=(("h", b"1"), ("h", b"2"), ("empty", b""), ("null", None)),
            partition=1,
            timestamp_ms=NOW_MS + 3,
        ),
    ]
    placed = kafka_broker.produce(sent)
    assert [(r.partition, r.offset) for r in placed] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    got = read_all(kafka_broker, topic)
    assert [(m.partition(), m.offset(), m.key(), m.value()) for m in got] == [
        (0, 0, b"k-null-value", None),
        (0, 1, None, b""),
        (1, 0, b"\x00\xff", bytes(range(256))),
        (1, 1, b"k", b"v"),
    ]
    assert [m.timestamp() for m in got] == [(1, NOW_MS + i) for i in range(4)]
    assert got[3].headers() == [("h", b"1"), ("h", b"2"), ("empty", b""), ("null", None)]
    assert got[0].headers() is None


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_compressed_batches(kafka_broker: Broker, kafka_topic, codec: str) -> None:
    topic = kafka_topic()
    producer = Producer(
        {
            "bootstrap.servers": kafka_broker.bootstrap_servers,
            "compression.codec": codec,
            "linger.ms": 50,
        }
    )
    for i in range(500):
        producer.produce(topic, f"value-{i}".encode() * 3, key=str(i).encode(), partition=0)
    assert producer.flush(30) == 0
    got = read_all(kafka_broker, topic)
    assert [m.offset() for m in got] == list(range(500))
    assert got[499].value() == b"value-499" * 3


def test_log_append_time_topic(kafka_broker: Broker, kafka_topic) -> None:
    topic = kafka_topic(config={"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    kafka_broker.produce([Record.make(topic, "x", timestamp_ms=NOW_MS - 86_400_000)])
    (msg,) = read_all(kafka_broker, topic)
    kind, ts = msg.timestamp()
    assert kind == 2  # TIMESTAMP_LOG_APPEND_TIME
    assert ts >= before - 1000


def test_offsets_for_times(kafka_broker: Broker, kafka_topic) -> None:
    topic = kafka_topic()
    kafka_broker.produce(
        [Record.make(topic, str(i), partition=0, timestamp_ms=NOW_MS + 10 * i) for i in range(5)]
    )
    consumer = Consumer({"bootstrap.servers": kafka_broker.bootstrap_servers, "group.id": "t"})
    try:
        asks = [NOW_MS - 1, NOW_MS + 10, NOW_MS + 11, NOW_MS + 40, NOW_MS + 41]
        answers = [
            consumer.offsets_for_times([TopicPartition(topic, 0, t)], timeout=10)[0].offset
            for t in asks
        ]
    finally:
        consumer.close()
    assert answers == [0, 1, 2, 4, -1]


def test_earliest_latest_and_delete_records(kafka_broker: Broker, kafka_topic) -> None:
    topic = kafka_topic(partitions=2)
    kafka_broker.produce([Record.make(topic, str(i), partition=i % 2) for i in range(10)])
    assert kafka_broker.earliest_offsets(topic) == {0: 0, 1: 0}
    assert kafka_broker.latest_offsets(topic) == {0: 5, 1: 5}
    assert kafka_broker.delete_records(topic, {0: 3}) == {0: 3}
    assert kafka_broker.earliest_offsets(topic) == {0: 3, 1: 0}
    assert [m.offset() for m in read_all(kafka_broker, topic) if m.partition() == 0] == [3, 4]

    consumer = Consumer(
        {
            "bootstrap.servers": kafka_broker.bootstrap_servers,
            "group.id": "oor",
            "auto.offset.reset": "error",
        }
    )
    try:
        consumer.assign([TopicPartition(topic, 0, 1)])
        errors = []
        deadline = time.monotonic() + 20
        while not errors and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error():
                errors.append(msg.error().code())
    finally:
        consumer.close()
    assert errors == [KafkaError._AUTO_OFFSET_RESET]


def test_delete_records_beyond_the_end_is_refused(kafka_broker: Broker, kafka_topic) -> None:
    topic = kafka_topic()
    kafka_broker.produce([Record.make(topic, "a")])
    with pytest.raises(Exception, match=r"OFFSET_OUT_OF_RANGE|out of range"):
        kafka_broker.delete_records(topic, {0: 5})


def test_recreated_topic_starts_again_at_zero(kafka_broker: Broker, kafka_topic) -> None:
    topic = kafka_topic(partitions=1)
    kafka_broker.produce([Record.make(topic, str(i)) for i in range(3)])
    kafka_broker.delete_topic(topic)
    assert topic not in kafka_broker.list_topics()
    kafka_broker.create_topic(topic, partitions=2)
    assert kafka_broker.latest_offsets(topic) == {0: 0, 1: 0}
    placed = kafka_broker.produce([Record.make(topic, "new", partition=0)])
    assert placed[0].offset == 0


def test_admin_errors(kafka_broker: Broker, kafka_topic) -> None:
    topic = kafka_topic(partitions=2)
    admin = kafka_broker.admin()

    def error_of(future) -> str:
        with pytest.raises(KafkaException) as info:
            future.result(30)
        return info.value.args[0].name()

    assert error_of(admin.create_topics([NewTopic(topic, 1, 1)])[topic]) == "TOPIC_ALREADY_EXISTS"
    assert error_of(admin.create_topics([NewTopic(f"{topic}-zero", 0, 1)])[f"{topic}-zero"]) == (
        "INVALID_PARTITIONS"
    )
    assert (
        error_of(admin.create_partitions([NewPartitions(topic, 1)])[topic]) == "INVALID_PARTITIONS"
    )
    missing = f"{topic}-missing"
    assert error_of(admin.delete_topics([missing])[missing]) == "UNKNOWN_TOPIC_OR_PART"


def test_topic_configs_are_kept(kafka_broker: Broker, kafka_topic) -> None:
    topic = kafka_topic(config={"retention.ms": 123456, "cleanup.policy": "delete"})
    config = kafka_broker.topic_config(topic)
    assert config["retention.ms"] == "123456"
    assert config["cleanup.policy"] == "delete"
    assert config["max.message.bytes"] == "1048588"
    kafka_broker.alter_topic_config(topic, {"retention.ms": 1000, "max.message.bytes": 2000})
    config = kafka_broker.topic_config(topic)
    assert (config["retention.ms"], config["max.message.bytes"]) == ("1000", "2000")


def test_record_over_max_message_bytes_is_refused(kafka_broker: Broker, kafka_topic) -> None:
    topic = kafka_topic(config={"max.message.bytes": 1000})
    outcomes: list[str] = []
    for value in (b"x" * 5000, b"small"):
        producer = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers})
        producer.produce(
            topic, value, on_delivery=lambda err, _m: outcomes.append(err.name() if err else "ok")
        )
        producer.flush(30)
    assert outcomes == ["MSG_SIZE_TOO_LARGE", "ok"]
    assert kafka_broker.latest_offsets(topic) == {0: 1}


def test_group_commit_and_committed(kafka_broker: Broker, kafka_topic) -> None:
    topic = kafka_topic(partitions=2)
    kafka_broker.produce([Record.make(topic, str(i), partition=i % 2) for i in range(6)])
    group = f"g-{topic}"
    consumer = Consumer(
        {
            "bootstrap.servers": kafka_broker.bootstrap_servers,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    seen = 0
    deadline = time.monotonic() + 60
    while seen < 6 and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and not msg.error():
            seen += 1
    consumer.commit(asynchronous=False)
    committed = consumer.committed([TopicPartition(topic, 0), TopicPartition(topic, 1)], timeout=10)
    consumer.close()
    assert seen == 6
    assert sorted((tp.partition, tp.offset) for tp in committed) == [(0, 3), (1, 3)]


def test_session_timeout_below_the_broker_minimum_is_refused(
    kafka_broker: Broker, kafka_topic
) -> None:
    topic = kafka_topic()
    consumer = Consumer(
        {
            "bootstrap.servers": kafka_broker.bootstrap_servers,
            "group.id": f"short-{topic}",
            "session.timeout.ms": 1000,
            "heartbeat.interval.ms": 300,
        }
    )
    consumer.subscribe([topic])
    errors = []
    deadline = time.monotonic() + 20
    try:
        while not errors and time.monotonic() < deadline:
            try:
                msg = consumer.poll(0.5)
            except KafkaException as exc:
                errors.append(exc.args[0].name())
                continue
            if msg is not None and msg.error():
                errors.append(msg.error().name())
    finally:
        consumer.close()
    assert errors[:1] == ["INVALID_SESSION_TIMEOUT"]


def test_records_older_than_retention_age_out(kafka_broker: Broker, kafka_topic) -> None:
    """Explicit timestamps older than retention.ms (7 days by default) are deleted by the
    broker's retention check (kafkatest runs both brokers with a 500 ms interval)."""
    topic = kafka_topic()
    old = NOW_MS - 8 * 86_400_000
    kafka_broker.produce([Record.make(topic, str(i), timestamp_ms=old + i) for i in range(3)])
    deadline = time.monotonic() + 30
    while kafka_broker.earliest_offsets(topic) != {0: 3} and time.monotonic() < deadline:
        time.sleep(0.2)
    assert kafka_broker.earliest_offsets(topic) == {0: 3}
    assert kafka_broker.latest_offsets(topic) == {0: 3}
    assert read_all(kafka_broker, topic) == []
