"""What a classic group and its commits leave in ``__consumer_offsets``, on every
backend: the records Kafka 4.1's group coordinator writes (and a reader of the
internal topic, such as kafka-console-consumer's GroupMetadataMessageFormatter,
shows), in the order it writes them. Observed on the `kafka` backend first.
"""

from __future__ import annotations

import struct
import time
import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from kafkatest import Broker

OFFSETS_TOPIC = "__consumer_offsets"


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, fmt: str) -> Any:
        (value,) = struct.unpack_from(fmt, self.data, self.at)
        self.at += struct.calcsize(fmt)
        return value

    def string(self) -> str | None:
        size = self.take(">h")
        if size < 0:
            return None
        text = self.data[self.at : self.at + size].decode()
        self.at += size
        return text

    def blob(self) -> bytes:
        size = self.take(">i")
        self.at += size
        return self.data[self.at - size : self.at]

    def compact_string(self) -> str:
        size = self.data[self.at] - 1  # short strings only
        self.at += 1 + size
        return self.data[self.at - size : self.at].decode()


def decoded(key: bytes, value: bytes | None, group: str) -> tuple[Any, ...] | None:
    """`group`'s offset or classic group record as (kind, key fields..., value
    fields...), times and member ids left out; None for any other record (other
    groups', and KIP-848 groups' own records, key versions 3 and up)."""
    k = _Reader(key)
    version = k.take(">h")
    if version not in (0, 1, 2) or k.string() != group:
        return None
    if version in (0, 1):
        head: tuple[Any, ...] = ("offset", group, k.string(), k.take(">i"))
        if value is None:
            return (*head, None)
        v = _Reader(value)
        assert v.take(">h") == 4
        offset, epoch = v.take(">q"), v.take(">i")
        return (*head, offset, epoch, v.compact_string())
    head = ("group", group)
    if value is None:
        return (*head, None)
    v = _Reader(value)
    assert v.take(">h") == 3
    protocol_type, generation = v.string(), v.take(">i")
    protocol, leader = v.string(), v.string()
    v.take(">q")  # when the state changed
    members = []
    for _ in range(v.take(">i")):
        member_id, instance, client_id, host = v.string(), v.string(), v.string(), v.string()
        rebalance, session = v.take(">i"), v.take(">i")
        subscription, assignment = v.blob(), v.blob()
        assert member_id is not None and member_id.startswith(f"{client_id}-")
        assert leader == member_id
        members.append((instance, client_id, host, rebalance, session, subscription, assignment))
    return (*head, protocol_type, generation, protocol, leader is not None, members)


def group_records(broker: Broker, group: str, at_least: int) -> list[tuple[Any, ...]]:
    """The group's records in the offsets topic (Kafka's appear a moment after the
    request they record is answered)."""
    reader = Consumer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "group.id": f"reader-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
        }
    )
    found: list[tuple[Any, ...]] = []
    try:
        reader.assign([TopicPartition(OFFSETS_TOPIC, 0, 0)])
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and len(found) < at_least:
            message = reader.poll(0.2)
            if message is None or message.error():
                continue
            record = decoded(message.key(), message.value(), group)
            if record is not None:
                found.append(record)
    finally:
        reader.close()
    return found


@pytest.mark.kafka_min_version(
    "4.0", "the record versions read here are Kafka 4's group coordinator's; 3.9's are older"
)
def test_a_classic_groups_life_is_recorded_in_the_offsets_topic(kafka_broker: Broker) -> None:
    topic, group = (f"records-{kind}-{uuid.uuid4().hex[:8]}" for kind in "tg")
    kafka_broker.create_topic(topic, partitions=1)
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers})
    producer.produce(topic, b"v")
    producer.flush(10)
    consumer = Consumer(
        {
            "bootstrap.servers": kafka_broker.bootstrap_servers,
            "group.id": group,
            "client.id": "recorded",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    deadline = time.monotonic() + 30
    while (message := consumer.poll(0.5)) is None or message.error():
        assert time.monotonic() < deadline, "nothing consumed"
    consumer.commit(asynchronous=False)
    consumer.commit(offsets=[TopicPartition(topic, 0, 1, "meta")], asynchronous=False)
    consumer.close()

    records = group_records(kafka_broker, group, at_least=5)

    assert records[0] == ("group", group, "", 0, None, False, [])  # created, empty
    kind, _, protocol_type, generation, protocol, has_leader, members = records[1]
    assert (kind, protocol_type, generation, protocol, has_leader) == (
        "group",
        "consumer",
        1,
        "range",
        True,
    )
    [(instance, client_id, host, rebalance, session, subscription, assignment)] = members
    assert (instance, client_id, host, rebalance, session) == (
        None,
        "recorded",
        "/127.0.0.1",
        300000,
        45000,
    )
    assert topic.encode() in subscription and topic.encode() in assignment
    assert records[2:] == [
        ("offset", group, topic, 0, 1, 0, ""),
        # librdkafka sends the metadata with its C string's terminator.
        ("offset", group, topic, 0, 1, -1, "meta\0"),
        ("group", group, "consumer", 2, None, False, []),  # the last member left
    ]


@pytest.mark.kafka_min_version(
    "4.0", "the record versions read here are Kafka 4's group coordinator's; 3.9's are older"
)
def test_deleting_a_group_writes_tombstones(kafka_broker: Broker) -> None:
    topic, group = (f"tombstones-{kind}-{uuid.uuid4().hex[:8]}" for kind in "tg")
    kafka_broker.create_topic(topic, partitions=2)
    committer = Consumer({"bootstrap.servers": kafka_broker.bootstrap_servers, "group.id": group})
    committer.commit(
        offsets=[TopicPartition(topic, 0, 3), TopicPartition(topic, 1, 4)], asynchronous=False
    )
    committer.close()
    [deleted] = kafka_broker.admin().delete_consumer_groups([group]).values()
    deleted.result(30)

    records = group_records(kafka_broker, group, at_least=5)

    assert sorted(records[:2]) == [
        ("offset", group, topic, 0, 3, -1, ""),
        ("offset", group, topic, 1, 4, -1, ""),
    ]
    assert sorted(records[2:4]) == [
        ("offset", group, topic, 0, None),
        ("offset", group, topic, 1, None),
    ]
    assert records[4:] == [("group", group, None)]
