"""The records Kafka's group coordinator writes to ``__consumer_offsets``.

Kafka keeps groups and committed offsets as records in the offsets topic, and a
client may read them: a consumer with ``exclude.internal.topics=false``, or
``kafka-console-consumer --formatter ...OffsetsMessageFormatter`` (or
``GroupMetadataMessageFormatter``) when someone debugs a group. The emulator keeps
its groups and offsets in memory and writes the same records beside them, in the
formats and at the moments a Kafka 4.1 coordinator writes them (observed on the
`kafka` backend):

- a commit: OffsetCommitKey v1 (group, topic, partition) and OffsetCommitValue v4
  (offset, leader epoch, metadata, commit time); a deleted offset, a null value;
- a classic group: GroupMetadataKey v2 (group) and GroupMetadataValue v3 when the
  group is created (empty), when a generation's assignment is installed, and when
  the group falls empty; a deleted group, a null value.

KIP-848 groups' own records (ConsumerGroupMetadata and the rest) are not written;
their commits are. A transactional commit is written when its transaction commits.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from kafkatest.emulator.protocol.batches import BatchHeader, read_header
from kafkatest.emulator.protocol.record_rewrite import single_record_batch
from kafkatest.emulator.state.clock import Clock
from kafkatest.emulator.state.groups.offsets import CommittedOffset
from kafkatest.emulator.state.internal_topics import OFFSETS_TOPIC, partition_for
from kafkatest.emulator.state.topics import Topic, TopicRegistry


class RecordsHost(Protocol):
    """What writing group records needs of the broker state (`EmulatorState` is
    one): its topics and clock, and appending a batch to a partition."""

    @property
    def topics(self) -> TopicRegistry: ...
    @property
    def clock(self) -> Clock: ...

    def append(self, topic: Topic, partition: int, header: BatchHeader, batch: bytes) -> object: ...


log = logging.getLogger("kafkatest.emulator")

_OFFSET_COMMIT_KEY_VERSION = 1
_OFFSET_COMMIT_VALUE_VERSION = 4
_GROUP_METADATA_KEY_VERSION = 2
_GROUP_METADATA_VALUE_VERSION = 3


@dataclass(frozen=True, slots=True)
class MemberRecord:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupMetadataRecord:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    state_timestamp_ms: int
    members: Sequence[MemberRecord] = ()


def _string(text: str | None) -> bytes:
    """int16-sized string; null is -1."""
    if text is None:
        return struct.pack(">h", -1)
    data = text.encode()
    return struct.pack(">h", len(data)) + data


def _bytes(data: bytes) -> bytes:
    return struct.pack(">i", len(data)) + data


def _uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _compact_string(text: str | None) -> bytes:
    if text is None:
        return b"\x00"
    data = text.encode()
    return _uvarint(len(data) + 1) + data


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    return (
        struct.pack(">h", _OFFSET_COMMIT_KEY_VERSION)
        + _string(group)
        + _string(topic)
        + struct.pack(">i", partition)
    )


def offset_commit_value(committed: CommittedOffset) -> bytes:
    return (
        struct.pack(">hqi", _OFFSET_COMMIT_VALUE_VERSION, committed.offset, committed.leader_epoch)
        + _compact_string(committed.metadata or "")
        + struct.pack(">q", committed.commit_timestamp_ms)
        + b"\x00"  # no tagged fields
    )


def group_metadata_key(group: str) -> bytes:
    return struct.pack(">h", _GROUP_METADATA_KEY_VERSION) + _string(group)


def group_metadata_value(record: GroupMetadataRecord) -> bytes:
    members = b"".join(
        _string(m.member_id)
        + _string(m.group_instance_id)
        + _string(m.client_id)
        + _string(m.client_host)
        + struct.pack(">ii", m.rebalance_timeout_ms, m.session_timeout_ms)
        + _bytes(m.subscription)
        + _bytes(m.assignment)
        for m in record.members
    )
    return (
        struct.pack(">h", _GROUP_METADATA_VALUE_VERSION)
        + _string(record.protocol_type)
        + struct.pack(">i", record.generation)
        + _string(record.protocol)
        + _string(record.leader)
        + struct.pack(">qi", record.state_timestamp_ms, len(record.members))
        + members
    )


class GroupRecords:
    """Appends the coordinator's records to the group's offsets partition, once the
    offsets topic exists (clients create it with their first coordinator lookup)."""

    def __init__(self, state: RecordsHost) -> None:
        self._state = state

    def offset_committed(
        self, group: str, topic: str, partition: int, committed: CommittedOffset
    ) -> None:
        self._write(
            group,
            lambda: offset_commit_key(group, topic, partition),
            lambda: offset_commit_value(committed),
            committed.commit_timestamp_ms,
        )

    def offset_removed(self, group: str, topic: str, partition: int) -> None:
        self._write(group, lambda: offset_commit_key(group, topic, partition), lambda: None)

    def group_changed(self, group: str, record: GroupMetadataRecord) -> None:
        self._write(
            group,
            lambda: group_metadata_key(group),
            lambda: group_metadata_value(record),
            record.state_timestamp_ms,
        )

    def group_removed(self, group: str) -> None:
        self._write(group, lambda: group_metadata_key(group), lambda: None)

    def _write(
        self,
        group: str,
        key: Callable[[], bytes],
        value: Callable[[], bytes | None],
        timestamp_ms: int | None = None,
    ) -> None:
        """The records mirror state the coordinator already changed, so one that
        cannot be encoded (a client-chosen string past Kafka's 32767-byte limit) is
        skipped with a log line rather than failing the request half done."""
        try:
            encoded_key, encoded_value = key(), value()
        except struct.error as exc:
            log.warning("group %.80r: record not written to %s: %s", group, OFFSETS_TOPIC, exc)
            return
        self._append(group, encoded_key, encoded_value, timestamp_ms)

    def _append(
        self, group: str, key: bytes, value: bytes | None, timestamp_ms: int | None = None
    ) -> None:
        topic = self._state.topics.find(OFFSETS_TOPIC)
        if topic is None:
            return
        when = self._state.clock.now_ms() if timestamp_ms is None else timestamp_ms
        batch = single_record_batch(key, value, when)
        partition = partition_for(group, len(topic.partitions))
        self._state.append(topic, partition, read_header(batch), batch)
