"""Transactions as a client sees them, asserted identically on the emulator and Kafka 4.1.

confluent-kafka (librdkafka 2.x) is a TV1 client (AddPartitionsToTxn v0, EndTxn v1,
Produce v10): it keeps its producer epoch across transactions. Every commit or abort
writes one control batch (a marker) per partition, which takes one offset; consumers
skip it, so the offsets they see have gaps where markers are.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import (
    Consumer,
    IsolationLevel,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, OffsetSpec

from kafkatest import Broker

TIMEOUT_S = 30


def txn_producer(broker: Broker, transactional_id: str | None = None, **config: object) -> Producer:
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "transactional.id": transactional_id or f"txn-{uuid.uuid4().hex[:8]}",
            **config,
        }
    )
    producer.init_transactions(TIMEOUT_S)
    return producer


def read(broker: Broker, topic: str, isolation: str, partition: int = 0) -> list[tuple[int, bytes]]:
    """(offset, value) of every record up to the end the isolation level allows."""
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "group.id": f"reader-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "isolation.level": isolation,
        }
    )
    consumer.assign([TopicPartition(topic, partition, 0)])
    out: list[tuple[int, bytes]] = []
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    return out
                raise KafkaException(msg.error())
            out.append((msg.offset(), msg.value()))
    finally:
        consumer.close()
    raise AssertionError(f"{isolation} read of {topic} never reached the end: {out}")


def latest(broker: Broker, topic: str, isolation: IsolationLevel) -> int:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    tp = TopicPartition(topic, 0)
    result = admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=isolation)
    return int(result[tp].result(TIMEOUT_S).offset)


@pytest.fixture
def producers() -> Iterator[list[Producer]]:
    """Producers a test opens; flushed-and-dropped at the end, so no thread outlives it."""
    made: list[Producer] = []
    yield made
    for producer in made:
        producer.purge()


def test_commit_abort_and_plain_record_by_isolation_level(
    kafka_broker: Broker, kafka_topic
) -> None:
    """Kafka: c1 c2 at 0-1, commit marker 2, a1 at 3, abort marker 4, plain record 5."""
    topic = kafka_topic()
    producer = txn_producer(kafka_broker)
    producer.begin_transaction()
    producer.produce(topic, b"c1", partition=0)
    producer.produce(topic, b"c2", partition=0)
    producer.commit_transaction(TIMEOUT_S)
    producer.begin_transaction()
    producer.produce(topic, b"a1", partition=0)
    producer.flush(TIMEOUT_S)
    producer.abort_transaction(TIMEOUT_S)
    _plain(kafka_broker, topic, b"plain")

    assert read(kafka_broker, topic, "read_committed") == [(0, b"c1"), (1, b"c2"), (5, b"plain")]
    assert read(kafka_broker, topic, "read_uncommitted") == [
        (0, b"c1"),
        (1, b"c2"),
        (3, b"a1"),
        (5, b"plain"),
    ]
    assert latest(kafka_broker, topic, IsolationLevel.READ_COMMITTED) == 6
    assert latest(kafka_broker, topic, IsolationLevel.READ_UNCOMMITTED) == 6


def _plain(broker: Broker, topic: str, value: bytes) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    producer.produce(topic, value, partition=0)
    assert producer.flush(TIMEOUT_S) == 0


def test_open_transaction_holds_back_read_committed_at_the_last_stable_offset(
    kafka_broker: Broker, kafka_topic, producers: list[Producer]
) -> None:
    """An open transaction at offset 2 stops read_committed there; read_uncommitted and
    a later plain record go on. ListOffsets latest: the LSO (2) against the HW (4)."""
    topic = kafka_topic()
    _plain(kafka_broker, topic, b"p0")
    _plain(kafka_broker, topic, b"p1")
    hung = txn_producer(kafka_broker)
    producers.append(hung)
    hung.begin_transaction()
    hung.produce(topic, b"open", partition=0)
    hung.flush(TIMEOUT_S)
    _plain(kafka_broker, topic, b"p3")

    assert latest(kafka_broker, topic, IsolationLevel.READ_COMMITTED) == 2
    assert latest(kafka_broker, topic, IsolationLevel.READ_UNCOMMITTED) == 4
    assert read(kafka_broker, topic, "read_committed") == [(0, b"p0"), (1, b"p1")]
    assert read(kafka_broker, topic, "read_uncommitted") == [
        (0, b"p0"),
        (1, b"p1"),
        (2, b"open"),
        (3, b"p3"),
    ]
    hung.commit_transaction(TIMEOUT_S)
    assert latest(kafka_broker, topic, IsolationLevel.READ_COMMITTED) == 5
    assert read(kafka_broker, topic, "read_committed") == [
        (0, b"p0"),
        (1, b"p1"),
        (2, b"open"),
        (3, b"p3"),
    ]


def test_a_new_producer_with_the_same_id_fences_the_zombie(
    kafka_broker: Broker, kafka_topic, producers: list[Producer]
) -> None:
    """InitProducerId from the new instance aborts the zombie's open transaction; the
    zombie's commit then fails fatally (fenced) and its records never become visible."""
    topic = kafka_topic()
    transactional_id = f"fence-{uuid.uuid4().hex[:8]}"
    zombie = txn_producer(kafka_broker, transactional_id)
    producers.append(zombie)
    zombie.begin_transaction()
    zombie.produce(topic, b"zombie", partition=0)
    zombie.flush(TIMEOUT_S)

    successor = txn_producer(kafka_broker, transactional_id)
    with pytest.raises(KafkaException) as failure:
        zombie.commit_transaction(TIMEOUT_S)
    error = failure.value.args[0]
    assert error.fatal()
    assert error.code() == KafkaError._FENCED

    successor.begin_transaction()
    successor.produce(topic, b"successor", partition=0)
    successor.commit_transaction(TIMEOUT_S)
    # zombie 0, abort marker 1 (written when the successor fenced it), successor 2, commit 3
    assert read(kafka_broker, topic, "read_committed") == [(2, b"successor")]
    assert read(kafka_broker, topic, "read_uncommitted") == [(0, b"zombie"), (2, b"successor")]
