"""Transactions left open by a fault, on every backend: what read_committed readers see.

A hung (or crashed) transactional producer holds the last stable offset at its first
record; read_committed stops there while read_uncommitted and ListOffsets at the
high watermark move on with later records. `clear()` aborts the transaction (a new
producer with its transactional id fences it), which frees the readers.
"""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import IsolationLevel, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from kafkatest import Broker
from kafkatest.brokers.capabilities import Capability
from kafkatest.faults.validation import InvalidFault

TIMEOUT_S = 30


def latest(broker: Broker, topic: str, isolation: IsolationLevel) -> int:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    tp = TopicPartition(topic, 0)
    result = admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=isolation)
    return int(result[tp].result(TIMEOUT_S).offset)


def plain(broker: Broker, topic: str, *values: bytes) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    for value in values:
        producer.produce(topic, value, partition=0)
    assert producer.flush(TIMEOUT_S) == 0


def eventually_latest(broker: Broker, topic: str, expected: int) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while latest(broker, topic, IsolationLevel.READ_COMMITTED) != expected:
        assert time.monotonic() < deadline, f"read_committed latest never reached {expected}"
        time.sleep(0.1)


@pytest.mark.parametrize("action", ["hung_transaction", "crash_producer_mid_transaction"])
def test_an_open_transaction_holds_the_last_stable_offset_until_cleared(
    kafka_broker: Broker, kafka_topic, kafka_faults, action: str
) -> None:
    topic = kafka_topic()
    plain(kafka_broker, topic, b"before")
    transactional_id = getattr(kafka_faults, action)(topic, records=2)
    plain(kafka_broker, topic, b"after")

    assert latest(kafka_broker, topic, IsolationLevel.READ_COMMITTED) == 1
    assert latest(kafka_broker, topic, IsolationLevel.READ_UNCOMMITTED) == 4
    assert [
        f["transactional_id"]
        for f in kafka_faults.active()
        if f["kind"]
        == ("crashed_transaction" if action.startswith("crash") else "hung_transaction")
    ] == [transactional_id]

    kafka_faults.clear()
    # before 0, open-0 1, open-1 2, after 3, abort marker 4
    eventually_latest(kafka_broker, topic, 5)
    assert kafka_faults.active() == []


def test_a_crashed_producers_transaction_ends_at_its_timeout(
    kafka_broker: Broker, kafka_topic, kafka_faults
) -> None:
    """Nobody aborts it: the coordinator does, once transaction.timeout.ms has passed
    (the emulator's clock is moved; real Kafka is given the time)."""
    topic = kafka_topic()
    # Long on the emulator (its clock is moved), short enough to wait out on Kafka.
    timeout_ms = 60_000 if kafka_broker.can(Capability.CLOCK) else 5_000
    kafka_faults.crash_producer_mid_transaction(topic, transaction_timeout_ms=timeout_ms)
    assert latest(kafka_broker, topic, IsolationLevel.READ_COMMITTED) == 0
    kafka_broker.let_time_pass((timeout_ms + 600) / 1000)  # the clock, or a real wait
    eventually_latest(kafka_broker, topic, 2)


def test_open_transaction_faults_check_their_target(
    kafka_broker: Broker, kafka_topic, kafka_faults
) -> None:
    topic = kafka_topic()
    missing = f"missing-{uuid.uuid4().hex[:6]}"
    with pytest.raises(InvalidFault, match="does not exist"):
        kafka_faults.hung_transaction(missing)
    with pytest.raises(InvalidFault, match="partition 3 does not exist"):
        kafka_faults.hung_transaction(topic, partition=3)
    with pytest.raises(InvalidFault, match="transaction_timeout_ms 900001 is over the limit"):
        kafka_faults.crash_producer_mid_transaction(topic, transaction_timeout_ms=900_001)
    with pytest.raises(InvalidFault, match="records must be at least 1"):
        kafka_faults.hung_transaction(topic, records=0)
    assert kafka_faults.active() == []
