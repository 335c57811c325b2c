"""Per-record timestamps of a batch, for ListOffsets by timestamp.

The only place records are decoded: the broker otherwise works per batch.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafkatest.emulator.protocol.batches import BatchHeader, records_section
from kafkatest.emulator.protocol.compression import decompress
from kafkatest.emulator.protocol.primitives import DecodeError, read_varint


def record_timestamps(header: BatchHeader, batch: bytes) -> Iterator[tuple[int, int]]:
    """(offset, timestamp) of each record, as a consumer would see them."""
    if header.uses_log_append_time:
        for delta in range(header.record_count):
            yield header.base_offset + delta, header.max_timestamp
        return
    body = decompress(header.compression, records_section(batch))
    offset = 0
    for _ in range(header.record_count):
        length, offset = read_varint(body, offset)
        record_end = offset + length
        if record_end > len(body):
            raise DecodeError("record runs past the end of its batch")
        offset += 1  # attributes
        timestamp_delta, offset = read_varint(body, offset)
        offset_delta, offset = read_varint(body, offset)
        yield header.base_offset + offset_delta, header.base_timestamp + timestamp_delta
        offset = record_end
