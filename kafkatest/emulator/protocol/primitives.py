"""The few wire primitives the codec reads by hand: varints and tagged fields.

kio decodes whole messages; these cover the places kio is not used (request
headers, record batches) or gets wrong (unknown tagged fields).
"""

from __future__ import annotations


class DecodeError(ValueError):
    """Bytes that do not follow the protocol's layout."""


def read_uvarint(data: bytes | bytearray | memoryview, offset: int) -> tuple[int, int]:
    """Unsigned LEB128 varint at `offset`; returns (value, next offset)."""
    result = 0
    shift = 0
    while True:
        if offset >= len(data):
            raise DecodeError("truncated varint")
        byte = data[offset]
        offset += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, offset
        shift += 7
        if shift > 63:
            raise DecodeError("varint longer than 10 bytes")


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
    """Skip a tagged-field section (count, then tag/size/bytes each); return the next offset."""
    count, offset = read_uvarint(data, offset)
    for _ in range(count):
        _tag, offset = read_uvarint(data, offset)
        size, offset = read_uvarint(data, offset)
        offset += size
        if offset > len(data):
            raise DecodeError("truncated tagged field")
    return offset
