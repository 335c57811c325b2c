"""The "consumer" embedded protocol: what classic consumers put in JoinGroup and SyncGroup.

The broker normally treats member metadata and assignments as opaque bytes. Kafka
looks inside in two places: OffsetDelete (the topics a group still reads) and the
online migration between classic and KIP-848 consumer groups, where the coordinator
turns a classic member's subscription into server-side state and writes its
assignment for it. Versions 0-3 share one layout, each adding fields at the end:

    subscription: version i16, topics [string], user data bytes?,
                  (v1+) owned partitions [topic string, partitions [i32]],
                  (v2+) generation id i32, (v3+) rack id string?
    assignment:   version i16, partitions [topic string, partitions [i32]], user data bytes?

Every count and length is checked against the bytes present before anything is
built, so a member's bytes cannot make the broker loop or allocate by their say.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

#: The protocol type classic members of a consumer group name in JoinGroup.
CONSUMER_PROTOCOL_TYPE = "consumer"

#: The newest layout kafka-clients writes; Kafka reads newer versions as this one.
MAX_VERSION = 3

#: topic name -> partition numbers, in the order the bytes give them.
TopicPartitions = dict[str, tuple[int, ...]]


class MalformedConsumerProtocol(ValueError):
    """The bytes are not a consumer-protocol subscription or assignment."""


@dataclass(frozen=True)
class Assignment:
    partitions: TopicPartitions
    #: A custom assignor's bytes, which a KIP-848 group cannot keep.
    has_user_data: bool


@dataclass(frozen=True)
class Subscription:
    version: int
    topics: tuple[str, ...]
    owned: TopicPartitions
    rack_id: str | None


class _Reader:
    def __init__(self, data: bytes) -> None:
        self._data = data
        self._at = 0

    def _take(self, size: int) -> bytes:
        if size < 0 or self._at + size > len(self._data):
            raise MalformedConsumerProtocol(
                f"needs {size} bytes at offset {self._at}, {len(self._data) - self._at} left"
            )
        chunk = self._data[self._at : self._at + size]
        self._at += size
        return chunk

    def done(self) -> bool:
        return self._at >= len(self._data)

    def i16(self) -> int:
        value: int = struct.unpack(">h", self._take(2))[0]
        return value

    def i32(self) -> int:
        value: int = struct.unpack(">i", self._take(4))[0]
        return value

    def count(self, least_item_size: int) -> int:
        """An array length, refused when the bytes left cannot hold that many items."""
        count = self.i32()
        if count < 0 or count * least_item_size > len(self._data) - self._at:
            raise MalformedConsumerProtocol(f"array of {count} items does not fit")
        return count

    def string(self) -> str:
        try:
            return self._take(self.i16()).decode()
        except UnicodeDecodeError as error:
            raise MalformedConsumerProtocol("topic name is not UTF-8") from error

    def nullable_string(self) -> str | None:
        size = self.i16()
        if size == -1:
            return None
        try:
            return self._take(size).decode()
        except UnicodeDecodeError as error:
            raise MalformedConsumerProtocol("rack id is not UTF-8") from error

    def skip_nullable_bytes(self) -> int:
        """Skips them; returns their length (-1: null)."""
        size = self.i32()
        if size != -1:
            self._take(size)
        return size

    def topic_partitions(self) -> TopicPartitions:
        found: TopicPartitions = {}
        for _ in range(self.count(least_item_size=6)):
            topic = self.string()
            partitions = tuple(self.i32() for _ in range(self.count(least_item_size=4)))
            found[topic] = found.get(topic, ()) + partitions
        return found


def _version(reader: _Reader) -> int:
    version = reader.i16()
    if version < 0:
        raise MalformedConsumerProtocol(f"version {version}")
    return min(version, MAX_VERSION)


def read_subscription(data: bytes) -> Subscription:
    reader = _Reader(data)
    version = _version(reader)
    topics = tuple(reader.string() for _ in range(reader.count(least_item_size=2)))
    reader.skip_nullable_bytes()
    owned: TopicPartitions = {}
    rack_id = None
    if version >= 1:
        owned = reader.topic_partitions()
    if version >= 2:
        reader.i32()  # generation id: the broker keeps its own
    if version >= 3:
        rack_id = reader.nullable_string()
    return Subscription(version, topics, owned, rack_id)


def subscribed_topics(metadata: bytes) -> frozenset[str] | None:
    """The subscribed topic names, or None when `metadata` is not a valid subscription."""
    try:
        return frozenset(read_subscription(metadata).topics)
    except MalformedConsumerProtocol:
        return None


def read_assignment(data: bytes) -> Assignment:
    reader = _Reader(data)
    _version(reader)
    partitions = reader.topic_partitions()
    return Assignment(partitions, reader.skip_nullable_bytes() > 0)


def subscription_version(metadata: bytes) -> int:
    """The version a member's subscription is written in; its assignment is written in it
    too (Kafka's ConsumerProtocol.deserializeVersion)."""
    return _version(_Reader(metadata))


def write_assignment(version: int, partitions: TopicPartitions) -> bytes:
    """A ConsumerProtocolAssignment without user data."""
    out = [struct.pack(">hi", version, len(partitions))]
    for topic, numbers in partitions.items():
        raw = topic.encode()
        out.append(struct.pack(">h", len(raw)) + raw)
        out.append(struct.pack(f">i{len(numbers)}i", len(numbers), *numbers))
    out.append(struct.pack(">i", -1))
    return b"".join(out)
