"""Builds record batches v2 by hand, for tests that need exact bytes on the wire."""

from __future__ import annotations

import struct
import time
from collections.abc import Sequence

from crc32c import crc32c

from kafkatest.emulator.protocol.primitives import encode_uvarint

#: Recent enough not to be aged out by the 7-day default retention.
RECENT_MS = (int(time.time()) - 3600) * 1000


def _varint(value: int) -> bytes:
    return encode_uvarint((value << 1) ^ (value >> 63))


def _bytes_field(value: bytes | None) -> bytes:
    if value is None:
        return _varint(-1)
    return _varint(len(value)) + value


def encode_record(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Sequence[tuple[str, bytes | None]] = (),
) -> bytes:
    body = (
        b"\0"
        + _varint(timestamp_delta)
        + _varint(offset_delta)
        + _bytes_field(key)
        + _bytes_field(value)
        + _varint(len(headers))
        + b"".join(_bytes_field(k.encode()) + _bytes_field(v) for k, v in headers)
    )
    return _varint(len(body)) + body


def build_batch(
    values: Sequence[bytes | None],
    base_timestamp: int = RECENT_MS,
    timestamps: Sequence[int] | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    attributes: int = 0,
    compress: object = None,
) -> bytes:
    """An uncompressed (or `compress(records)`-compressed) v2 batch with base offset 0."""
    stamps = list(timestamps) if timestamps is not None else [base_timestamp] * len(values)
    first = min(stamps)
    records = b"".join(
        encode_record(i, stamps[i] - first, f"k{i}".encode(), v) for i, v in enumerate(values)
    )
    if compress is not None:
        records = compress(records)  # type: ignore[operator]
    after_crc = (
        struct.pack(
            ">hiqqqhii",
            attributes,
            len(values) - 1,
            first,
            max(stamps),
            producer_id,
            producer_epoch,
            base_sequence,
            len(values),
        )
        + records
    )
    partition_leader_epoch = -1
    batch_length = 4 + 1 + 4 + len(after_crc)
    return (
        struct.pack(">qiib", 0, batch_length, partition_leader_epoch, 2)
        + struct.pack(">I", crc32c(after_crc))
        + after_crc
    )
