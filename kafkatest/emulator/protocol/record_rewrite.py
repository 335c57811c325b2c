"""Reading the records of a stored batch and writing a filtered copy of it.

Only the log cleaner uses this: it keeps some records of a batch and drops the
rest, as Kafka's `MemoryRecords.filterTo` does. The copy keeps everything a
consumer or an idempotent producer relies on (base offset, last offset delta,
producer id/epoch/sequence, leader epoch, codec, the transactional and control
flags), so offsets never move and readers see gaps; the CRC is recomputed.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from crc32c import crc32c

from kafkatest.emulator.protocol.batches import (
    COMPRESSION_MASK,
    CONTROL_FLAG,
    HEADER_SIZE,
    LOG_APPEND_TIME_FLAG,
    LOG_OVERHEAD,
    TRANSACTIONAL_FLAG,
    BatchHeader,
    records_section,
)
from kafkatest.emulator.protocol.compression import NONE, compress, decompress
from kafkatest.emulator.protocol.primitives import DecodeError, encode_uvarint, read_varint

#: Attribute bit 6: the batch's base timestamp is the delete horizon of its
#: tombstones and markers (KIP-534).
DELETE_HORIZON_FLAG = 0x40
_NO_TIMESTAMP = -1

_AFTER_CRC = struct.Struct(">hiqqqhii")
_PREFIX = struct.Struct(">qiibI")


@dataclass(frozen=True, slots=True)
class StoredRecord:
    offset: int
    timestamp: int
    #: None for a keyless record (raw bytes otherwise: Kafka compares keys as bytes).
    key: bytes | None
    #: False for a tombstone (null value).
    has_value: bool
    #: The record's key, value and headers exactly as encoded, copied into rewrites.
    tail: bytes


def has_delete_horizon(header: BatchHeader) -> bool:
    return bool(header.attributes & DELETE_HORIZON_FLAG)


def decode_records(header: BatchHeader, batch: bytes) -> list[StoredRecord]:
    """Every record of a stored batch, with absolute offsets and timestamps."""
    body = decompress(header.compression, records_section(batch))
    log_append_time = header.uses_log_append_time
    out: list[StoredRecord] = []
    offset = 0
    for _ in range(header.record_count):
        length, offset = read_varint(body, offset)
        end = offset + length
        if length < 0 or end > len(body):
            raise DecodeError("record runs past the end of its batch")
        offset += 1  # attributes
        timestamp_delta, offset = read_varint(body, offset)
        offset_delta, offset = read_varint(body, offset)
        tail_start = offset
        key_length, offset = read_varint(body, offset)
        key = None
        if key_length >= 0:
            key = bytes(body[offset : offset + key_length])
            offset += key_length
        value_length, offset = read_varint(body, offset)
        if offset > end:
            raise DecodeError("record fields run past the record's length")
        timestamp = (
            header.max_timestamp if log_append_time else header.base_timestamp + timestamp_delta
        )
        out.append(
            StoredRecord(
                header.base_offset + offset_delta,
                timestamp,
                key,
                value_length >= 0,
                bytes(body[tail_start:end]),
            )
        )
        offset = end
    return out


def rewrite_batch(
    header: BatchHeader, kept: list[StoredRecord], delete_horizon_ms: int | None
) -> bytes:
    """A copy of the batch holding only `kept` (non-empty), as Kafka's cleaner writes it.

    With a delete horizon the base timestamp becomes the horizon and the horizon
    flag is set; otherwise the base timestamp is the first kept record's. The last
    offset delta is the original one, so the last sequence survives compaction.
    """
    attributes = header.attributes & (COMPRESSION_MASK | LOG_APPEND_TIME_FLAG | TRANSACTIONAL_FLAG)
    attributes |= header.attributes & CONTROL_FLAG
    if delete_horizon_ms is not None:
        attributes |= DELETE_HORIZON_FLAG
        base_timestamp = delete_horizon_ms
    else:
        base_timestamp = kept[0].timestamp
    if header.uses_log_append_time:
        max_timestamp = header.max_timestamp
    else:
        max_timestamp = max(record.timestamp for record in kept)
    body = bytearray()
    for record in kept:
        fields = (
            b"\x00"
            + _zigzag(record.timestamp - base_timestamp)
            + _zigzag(record.offset - header.base_offset)
            + record.tail
        )
        body += _zigzag(len(fields)) + fields
    records = compress(header.compression, bytes(body))
    return _assemble(header, attributes, base_timestamp, max_timestamp, len(kept), records)


def single_record_batch(key: bytes | None, value: bytes | None, timestamp_ms: int) -> bytes:
    """A plain (non-idempotent, uncompressed) batch of one record at offset 0."""
    tail = _bytes_field(key) + _bytes_field(value) + _zigzag(0)
    record = StoredRecord(0, timestamp_ms, key, value is not None, tail)
    header = BatchHeader(0, 0, -1, 2, 0, 0, 0, timestamp_ms, timestamp_ms, -1, -1, -1, 1)
    return rewrite_batch(header, [record], None)


def empty_batch(header: BatchHeader) -> bytes:
    """The header alone (no records), kept where Kafka's cleaner keeps an emptied batch:
    it carries a live producer's last sequence, or the cleaned range's last offset."""
    attributes = header.attributes & (LOG_APPEND_TIME_FLAG | TRANSACTIONAL_FLAG | CONTROL_FLAG)
    return _assemble(header, attributes | NONE, _NO_TIMESTAMP, header.max_timestamp, 0, b"")


def _assemble(
    header: BatchHeader,
    attributes: int,
    base_timestamp: int,
    max_timestamp: int,
    count: int,
    records: bytes,
) -> bytes:
    after_crc = (
        _AFTER_CRC.pack(
            attributes,
            header.last_offset_delta,
            base_timestamp,
            max_timestamp,
            header.producer_id,
            header.producer_epoch,
            header.base_sequence,
            count,
        )
        + records
    )
    batch_length = HEADER_SIZE - LOG_OVERHEAD + len(records)
    prefix = _PREFIX.pack(
        header.base_offset,
        batch_length,
        header.partition_leader_epoch,
        header.magic,
        crc32c(after_crc),
    )
    return prefix + after_crc


def _bytes_field(value: bytes | None) -> bytes:
    return _zigzag(-1) if value is None else _zigzag(len(value)) + value


def _zigzag(value: int) -> bytes:
    return encode_uvarint((value << 1) ^ (value >> 63))
