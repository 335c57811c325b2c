"""The records of a produced batch, walked as Kafka's LogValidator walks them on append.

Kafka iterates every record of a batch before it appends it: a batch whose header
claims more records than it holds, or holds bytes after its last record, is
INVALID_RECORD ("Incorrect declared batch size"); each record's timestamp is
checked against the topic's limits; the batch's max timestamp is set to the
largest record timestamp. Without this a 71-byte batch could claim a million
records and move the log end by a million.

The walk reads two varints per record (its length and its timestamp delta) with
the one- and two-byte cases inline, so its cost follows the batch's bytes and
stays small beside the rest of a produce. Keys, values and headers are not
parsed (Kafka parses them; a record whose inside is malformed is kept here).

A compressed body is inflated at most to `compression.MAX_DECOMPRESSED_BYTES`
(Kafka streams it; the emulator holds it whole). When the declared records end
inside that prefix and more follows, the answer is Kafka's ("records still
remaining"); only a batch that needs more than the prefix is refused as corrupt.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kafkatest.emulator.protocol.batches import BatchError, BatchHeader, records_section
from kafkatest.emulator.protocol.compression import BodyTooLarge, DecompressionError, decompress
from kafkatest.emulator.protocol.primitives import DecodeError, read_uvarint, read_varint

NO_TIMESTAMP = -1
_NONE_YET = 1 << 62


@dataclass(frozen=True, slots=True)
class RecordTimestamps:
    """The smallest and largest record timestamp of a batch, as consumers read them."""

    low: int
    high: int


def scan_records(header: BatchHeader, batch: bytes) -> RecordTimestamps:
    """Check that the batch holds exactly `record_count` well-framed records.

    Raises `BatchError` ("invalid": INVALID_RECORD) otherwise.
    """
    body, too_large = _body_or_prefix(header, batch)
    count = header.record_count
    end = len(body)
    offset = 0
    index = 0
    low, high = _NONE_YET, -_NONE_YET
    try:
        while index < count:
            first = body[offset]
            if first < 0x80:
                raw = first
                offset += 1
            else:
                second = body[offset + 1]
                if second < 0x80:
                    raw = (first & 0x7F) | (second << 7)
                    offset += 2
                else:
                    raw, offset = read_uvarint(body, offset)
            record_end = offset + ((raw >> 1) ^ -(raw & 1))
            # attributes (one byte), then the timestamp delta
            first = body[offset + 1]
            if first < 0x80:
                delta = (first >> 1) ^ -(first & 1)
                after = offset + 2
            else:
                delta, after = read_varint(body, offset + 1)
            if record_end <= after or record_end > end:
                if too_large is not None and record_end > end:
                    raise BatchError("corrupt", str(too_large))
                raise BatchError(
                    "invalid", f"Found invalid record structure (record {index} of {count})"
                )
            if delta > high:
                high = delta
            if delta < low:
                low = delta
            offset = record_end
            index += 1
    except (IndexError, DecodeError) as exc:
        if too_large is not None:
            raise BatchError("corrupt", str(too_large)) from exc
        raise BatchError(
            "invalid",
            f"Incorrect declared batch size, premature EOF reached (record {index} of {count})",
        ) from exc
    if offset != end or too_large is not None:
        raise BatchError(
            "invalid", "Incorrect declared batch size, records still remaining in file"
        )
    if header.uses_log_append_time or not count:
        return RecordTimestamps(header.max_timestamp, header.max_timestamp)
    base = header.base_timestamp
    return RecordTimestamps(base + low, base + high)


@dataclass(frozen=True, slots=True)
class RecordSummary:
    """What Kafka's messages about one record say (DefaultRecord.toString)."""

    offset_delta: int
    timestamp: int
    key_size: int
    value_size: int

    def describe(self) -> str:
        return (
            f"DefaultRecord(offset={self.offset_delta}, timestamp={self.timestamp}, "
            f"key={self.key_size} bytes, value={self.value_size} bytes)"
        )


def summarize_records(header: BatchHeader, batch: bytes) -> Iterator[RecordSummary]:
    """Each record of a batch `scan_records` accepted (for error messages: slow)."""
    body = _body(header, batch)
    offset = 0
    for _ in range(header.record_count):
        length, offset = read_varint(body, offset)
        record_end = offset + length
        _timestamp_delta, position = read_varint(body, offset + 1)
        offset_delta, position = read_varint(body, position)
        key_size, position = read_varint(body, position)
        position += max(key_size, 0)
        value_size, _ = read_varint(body, position)
        timestamp = (
            header.max_timestamp
            if header.uses_log_append_time
            else header.base_timestamp + _timestamp_delta
        )
        yield RecordSummary(offset_delta, timestamp, max(key_size, 0), max(value_size, 0))
        offset = record_end


def _body_or_prefix(
    header: BatchHeader, batch: bytes
) -> tuple[bytes | memoryview, BodyTooLarge | None]:
    """The records' bytes, or the first MAX_DECOMPRESSED_BYTES of them and why."""
    try:
        return _body(header, batch), None
    except BatchError as exc:
        cause = exc.__cause__
        if isinstance(cause, BodyTooLarge):
            return cause.prefix, cause
        raise


def _body(header: BatchHeader, batch: bytes) -> bytes | memoryview:
    section = records_section(batch)
    if not header.compression:
        return section
    try:
        return decompress(header.compression, section)
    except DecompressionError as exc:
        raise BatchError("corrupt", str(exc)) from exc
