"""Transaction markers: the control batches a coordinator writes to end a transaction.

Kafka writes one marker batch per partition of a transaction when it commits or
aborts (WriteTxnMarkers). Its layout is fixed (``MemoryRecords.writeEndTransactionalMarker``):
magic 2, no compression, attributes transactional | control, the transaction's
producer id and epoch, base sequence -1 and a single record whose key is
(version 0, type) and whose value is (version 0, coordinator epoch). Consumers
never see it as a record, but it takes one offset, so readers see a gap there.
"""

from __future__ import annotations

import struct

from crc32c import crc32c

from kafkatest.emulator.protocol.batches import CONTROL_FLAG, TRANSACTIONAL_FLAG
from kafkatest.emulator.protocol.primitives import encode_uvarint

ABORT = 0
COMMIT = 1
_KEY = struct.Struct(">hh")
_VALUE = struct.Struct(">hi")
_AFTER_CRC = struct.Struct(">hiqqqhii")
_BEFORE_CRC = struct.Struct(">qiib")
_CRC = struct.Struct(">I")


def _zigzag(value: int) -> bytes:
    return encode_uvarint((value << 1) ^ (value >> 63))


def _marker_record(commit: bool, coordinator_epoch: int) -> bytes:
    key = _KEY.pack(0, COMMIT if commit else ABORT)
    value = _VALUE.pack(0, coordinator_epoch)
    body = (
        b"\x00"  # attributes
        + _zigzag(0)  # timestamp delta
        + _zigzag(0)  # offset delta
        + _zigzag(len(key))
        + key
        + _zigzag(len(value))
        + value
        + _zigzag(0)  # no headers
    )
    return _zigzag(len(body)) + body


def marker_batch(
    base_offset: int,
    leader_epoch: int,
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    coordinator_epoch: int,
    timestamp_ms: int,
) -> bytes:
    """The bytes of one commit or abort marker batch, placed at `base_offset`."""
    record = _marker_record(commit, coordinator_epoch)
    after_crc = (
        _AFTER_CRC.pack(
            TRANSACTIONAL_FLAG | CONTROL_FLAG,
            0,  # last offset delta
            timestamp_ms,
            timestamp_ms,
            producer_id,
            producer_epoch,
            -1,  # base sequence
            1,  # record count
        )
        + record
    )
    batch_length = len(after_crc) + 4 + 1 + 4  # crc, magic, partition leader epoch
    return (
        _BEFORE_CRC.pack(base_offset, batch_length, leader_epoch, 2)
        + _CRC.pack(crc32c(after_crc))
        + after_crc
    )
