"""Record batch v2, handled as raw bytes.

The broker keeps batches exactly as producers sent them and only rewrites the
two header fields that lie outside the CRC (base offset and partition leader
epoch), so a fetch is a byte copy and consumers see byte-identical records.
Only the 61-byte header is parsed on the hot path.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from crc32c import crc32c

HEADER_SIZE = 61
#: baseOffset + batchLength: bytes that precede what batchLength counts.
LOG_OVERHEAD = 12
#: Where the CRC-covered part begins (the attributes field).
CRC_START = 21
_CRC_OFFSET = 17
_ATTRIBUTES_OFFSET = 21
_MAX_TIMESTAMP_OFFSET = 35

_HEADER = struct.Struct(">qiibIhiqqqhii")
_BASE_OFFSET_AND_LENGTH = struct.Struct(">qi")
_BASE_OFFSET = struct.Struct(">q")
_LEADER_EPOCH = struct.Struct(">i")
_CRC = struct.Struct(">I")
_ATTRIBUTES = struct.Struct(">h")
_TIMESTAMP = struct.Struct(">q")

COMPRESSION_MASK = 0x07
LOG_APPEND_TIME_FLAG = 0x08
TRANSACTIONAL_FLAG = 0x10
CONTROL_FLAG = 0x20

NO_PRODUCER_ID = -1


class BatchError(ValueError):
    """A batch that cannot be stored; `kind` names Kafka's error for it."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        #: "corrupt" (CORRUPT_MESSAGE) or "invalid" (INVALID_RECORD).
        self.kind = kind


@dataclass(frozen=True, slots=True)
class BatchHeader:
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int

    @property
    def size(self) -> int:
        """Bytes the whole batch takes in a log or a fetch response."""
        return LOG_OVERHEAD + self.batch_length

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG)

    @property
    def uses_log_append_time(self) -> bool:
        return bool(self.attributes & LOG_APPEND_TIME_FLAG)

    @property
    def last_sequence(self) -> int:
        """Sequence of the last record, wrapping at 2^31 as Kafka does."""
        return (self.base_sequence + self.last_offset_delta) % 0x80000000


def read_header(data: bytes | bytearray | memoryview, offset: int = 0) -> BatchHeader:
    if len(data) - offset < HEADER_SIZE:
        raise BatchError("corrupt", "record batch shorter than its 61-byte header")
    return BatchHeader(*_HEADER.unpack_from(data, offset))


def split_batches(data: bytes) -> list[tuple[BatchHeader, bytes]]:
    """Cut a records field into (header, batch bytes) without checking CRCs."""
    out: list[tuple[BatchHeader, bytes]] = []
    offset = 0
    end = len(data)
    while offset < end:
        if end - offset < LOG_OVERHEAD:
            raise BatchError("corrupt", "trailing bytes after the last record batch")
        _, length = _BASE_OFFSET_AND_LENGTH.unpack_from(data, offset)
        size = LOG_OVERHEAD + length
        if length < HEADER_SIZE - LOG_OVERHEAD or offset + size > end:
            raise BatchError("corrupt", f"record batch length {length} does not fit the data")
        header = read_header(data, offset)
        if header.magic != 2:
            raise BatchError("invalid", f"record batch magic {header.magic}; only v2 is stored")
        out.append((header, data[offset : offset + size]))
        offset += size
    return out


def validate(header: BatchHeader, batch: bytes) -> None:
    """What Kafka checks on append without decompressing."""
    if crc32c(memoryview(batch)[CRC_START:]) != header.crc:
        raise BatchError("corrupt", "record batch CRC-32C does not match")
    if header.record_count <= 0 or header.last_offset_delta + 1 != header.record_count:
        raise BatchError(
            "invalid",
            f"record count {header.record_count} does not match "
            f"last offset delta {header.last_offset_delta}",
        )
    if header.is_control:
        raise BatchError("invalid", "clients may not produce control batches")


def place(
    batch: bytes,
    base_offset: int,
    leader_epoch: int,
    log_append_time: int | None = None,
    create_time_max: int | None = None,
) -> bytes:
    """A copy of `batch` as stored: new base offset and leader epoch.

    With `log_append_time`, the batch is stamped as a LogAppendTime batch whose
    max timestamp is that time; with `create_time_max`, as a CreateTime batch (a
    client's LogAppendTime bit cleared) whose max timestamp is that, as Kafka's
    LogValidator sets it from the records. Both are inside the CRC, so it is redone.
    """
    placed = bytearray(batch)
    _BASE_OFFSET.pack_into(placed, 0, base_offset)
    _LEADER_EPOCH.pack_into(placed, LOG_OVERHEAD, leader_epoch)
    if log_append_time is not None or create_time_max is not None:
        (attributes,) = _ATTRIBUTES.unpack_from(placed, _ATTRIBUTES_OFFSET)
        if log_append_time is not None:
            attributes |= LOG_APPEND_TIME_FLAG
            stamp = log_append_time
        else:
            attributes &= ~LOG_APPEND_TIME_FLAG
            stamp = create_time_max  # type: ignore[assignment]
        _ATTRIBUTES.pack_into(placed, _ATTRIBUTES_OFFSET, attributes)
        _TIMESTAMP.pack_into(placed, _MAX_TIMESTAMP_OFFSET, stamp)
        _CRC.pack_into(placed, _CRC_OFFSET, crc32c(memoryview(placed)[CRC_START:]))
    return bytes(placed)


def records_section(batch: bytes) -> memoryview:
    """The (possibly compressed) bytes after the header."""
    return memoryview(batch)[HEADER_SIZE:]
