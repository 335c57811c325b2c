"""The few wire primitives the codec reads by hand: varints and tagged fields.

kio decodes whole messages; these cover the places kio is not used (request
headers, record batches) or gets wrong (unknown tagged fields).
"""

from __future__ import annotations


class DecodeError(ValueError):
    """Bytes that do not follow the protocol's layout."""


def read_uvarint(
    data: bytes | bytearray | memoryview, offset: int, max_bytes: int = 10
) -> tuple[int, int]:
    """Unsigned LEB128 varint at `offset`; returns (value, next offset)."""
    result = 0
    shift = 0
    limit = 7 * max_bytes
    while True:
        if offset >= len(data):
            raise DecodeError("truncated varint")
        byte = data[offset]
        offset += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, offset
        shift += 7
        if shift >= limit:
            raise DecodeError(f"varint is too long (more than {max_bytes} bytes)")


def read_unsigned_varint32(data: bytes | bytearray | memoryview, offset: int) -> tuple[int, int]:
    """A varint as Kafka's broker reads counts, lengths and tags (ByteUtils.readUnsignedVarint).

    At most five bytes; the value wraps to a signed 32-bit int, so a count of 2^31
    or more reads as negative (which Kafka's readers take as null). Returns (value,
    next offset).
    """
    value, offset = read_uvarint(data, offset, 5)
    value &= 0xFFFFFFFF
    return (value - 0x100000000 if value >= 0x80000000 else value), offset


def read_varint(data: bytes | bytearray | memoryview, offset: int) -> tuple[int, int]:
    """Zigzag-encoded signed varint (record fields); returns (value, next offset)."""
    raw, offset = read_uvarint(data, offset)
    return (raw >> 1) ^ -(raw & 1), offset


def encode_uvarint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def skip_tagged_fields(data: bytes | bytearray | memoryview, offset: int) -> int:
    """Skip a tagged-field section (count, then tag/size/bytes each); return the next offset.

    Counts and sizes are read as Kafka reads them: a negative count means no fields.
    """
    count, offset = read_unsigned_varint32(data, offset)
    for _ in range(count):
        _tag, offset = read_unsigned_varint32(data, offset)
        size, offset = read_unsigned_varint32(data, offset)
        if size < 0:
            raise DecodeError(f"tagged field of negative size {size}")
        offset += size
        if offset > len(data):
            raise DecodeError("truncated tagged field")
    return offset
