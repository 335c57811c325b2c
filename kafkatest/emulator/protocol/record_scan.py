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

A compressed body is read as Kafka reads it, from a decompressing stream
(`compression.inflate`): records are walked chunk by chunk, the bytes of a record
past its head are dropped as they come, and the walk stops at the first wrong
record or at the first byte after the last one. A batch of a few kilobytes that
inflates to gigabytes of zeros is thus refused after its first chunk, as Kafka
refuses it, and a valid one with a 300 MiB value costs one chunk of memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kafkatest.emulator.protocol.batches import BatchError, BatchHeader, records_section
from kafkatest.emulator.protocol.compression import DecompressionError, inflate
from kafkatest.emulator.protocol.primitives import DecodeError, read_uvarint, read_varint

NO_TIMESTAMP = -1
_NONE_YET = 1 << 62
#: The most bytes a record's head takes: its length, attributes and timestamp delta
#: (varints of up to 10 bytes each).
_LONGEST_HEAD = 21


@dataclass(frozen=True, slots=True)
class RecordTimestamps:
    """The smallest and largest record timestamp of a batch, as consumers read them."""

    low: int
    high: int


def scan_records(header: BatchHeader, batch: bytes) -> RecordTimestamps:
    """Check that the batch holds exactly `record_count` well-framed records.

    A compressed body is read as Kafka reads it, from a stream: records are walked
    chunk by chunk, a record's bytes past its head are skipped without being kept,
    and the walk stops at the first record that is wrong. Raises `BatchError`
    ("invalid": INVALID_RECORD; "corrupt": CORRUPT_MESSAGE for a body that does not
    decompress) otherwise.
    """
    count = header.record_count
    if header.compression:
        walk = _walk_stream(_chunks(header, batch), count)
    else:
        section = records_section(batch)
        walk = _walk(section, 0, len(section), count, 0, _NONE_YET, -_NONE_YET, True)
    _offset, _index, low, high, _skip = walk
    if header.uses_log_append_time or not count:
        return RecordTimestamps(header.max_timestamp, header.max_timestamp)
    base = header.base_timestamp
    return RecordTimestamps(base + low, base + high)


_Walk = tuple[int, int, int, int, int]


def _walk(
    body: bytes | memoryview,
    offset: int,
    end: int,
    count: int,
    index: int,
    low: int,
    high: int,
    final: bool,
) -> _Walk:
    """Walk records `index`.. of `count` from `offset` in `body[:end]`.

    Returns (offset, index, low, high, skip). With `final`, `body` holds the rest of
    the records (and must hold nothing more). Otherwise more may follow: the walk
    stops at a record whose head (length, attributes, timestamp delta) is cut off,
    with `skip` 0, or past a record that runs on beyond `end`, with `skip` the bytes
    of it still to come.
    """
    start = offset
    try:
        while index < count:
            start = offset
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
            if record_end <= after or (final and record_end > end):
                raise BatchError(
                    "invalid", f"Found invalid record structure (record {index} of {count})"
                )
            if delta > high:
                high = delta
            if delta < low:
                low = delta
            index += 1
            if record_end > end:
                return end, index, low, high, record_end - end
            offset = record_end
    except (IndexError, DecodeError) as exc:
        if not final and end - start < _LONGEST_HEAD:
            return start, index, low, high, 0
        raise BatchError(
            "invalid",
            f"Incorrect declared batch size, premature EOF reached (record {index} of {count})",
        ) from exc
    if final and offset != end:
        raise _records_remaining()
    return offset, index, low, high, 0


def _walk_stream(chunks: Iterator[bytes | memoryview], count: int) -> _Walk:
    """`_walk` over a body that arrives in chunks: at most one chunk and the head of
    one record are held at a time."""
    window: bytes | memoryview = b""
    walk: _Walk = (0, 0, _NONE_YET, -_NONE_YET, 0)
    final = False
    while True:
        offset, index, low, high, skip = walk
        if skip:
            window = _skip(chunks, skip, index, count)
            offset = 0
        elif index == count:
            # One byte past the last record is too many: Kafka reads no further to tell.
            if len(window) > offset or next(chunks, None) is not None:
                raise _records_remaining()
            return walk
        elif final:
            raise AssertionError("a final walk ends every record or raises")
        else:
            chunk = next(chunks, None)
            if chunk is None:
                final = True
                window = window[offset:]
            else:
                window = bytes(window[offset:]) + chunk if offset < len(window) else chunk
            offset = 0
        walk = _walk(window, offset, len(window), count, index, low, high, final)


def _skip(
    chunks: Iterator[bytes | memoryview], skip: int, index: int, count: int
) -> bytes | memoryview:
    """Drop the next `skip` bytes of the stream; what follows them in their chunk."""
    for chunk in chunks:
        if len(chunk) > skip:
            return memoryview(chunk)[skip:]
        skip -= len(chunk)
        if not skip:
            return b""
    raise BatchError("invalid", f"Found invalid record structure (record {index - 1} of {count})")


def _records_remaining() -> BatchError:
    return BatchError("invalid", "Incorrect declared batch size, records still remaining in file")


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
    """Each record of a batch `scan_records` accepted (for error messages: slow), read
    from the stream as `scan_records` reads it, never whole."""
    stream = _Stream(_chunks(header, batch))
    for _ in range(header.record_count):
        head = stream.take(_LONGEST_HEAD + 10)
        length, position = read_varint(head, 0)
        record_end = position + length
        _timestamp_delta, position = read_varint(head, position + 1)
        offset_delta, position = read_varint(head, position)
        key_size, position = read_varint(head, position)
        # Keys and values are not checked on append: a key may claim more than its record.
        position = min(position + max(key_size, 0), record_end)
        stream.skip(position)
        value_size, _ = read_varint(stream.take(10), 0)
        stream.skip(record_end - position)
        timestamp = (
            header.max_timestamp
            if header.uses_log_append_time
            else header.base_timestamp + _timestamp_delta
        )
        yield RecordSummary(offset_delta, timestamp, max(key_size, 0), max(value_size, 0))


class _Stream:
    """A body read forward from its chunks: `take` the next bytes, `skip` past them."""

    def __init__(self, chunks: Iterator[bytes | memoryview]) -> None:
        self._chunks = chunks
        self._window: bytes | memoryview = b""
        self._offset = 0

    def take(self, size: int) -> bytes:
        """Up to `size` bytes from here (fewer at the end), without moving on."""
        while len(self._window) - self._offset < size:
            chunk = next(self._chunks, None)
            if chunk is None:
                break
            self._window = bytes(self._window[self._offset :]) + chunk
            self._offset = 0
        return bytes(self._window[self._offset : self._offset + size])

    def skip(self, size: int) -> None:
        while self._offset + size > len(self._window):
            size -= len(self._window) - self._offset
            chunk = next(self._chunks, None)
            if chunk is None:
                raise DecodeError("record runs past the end of its batch")
            self._window, self._offset = chunk, 0
        self._offset += size


def _chunks(header: BatchHeader, batch: bytes) -> Iterator[bytes | memoryview]:
    """The records' bytes as they inflate; a body that does not is corrupt."""
    section = records_section(batch)
    if not header.compression:
        yield section
        return
    try:
        yield from inflate(header.compression, section)
    except DecompressionError as exc:
        raise BatchError("corrupt", str(exc)) from exc
