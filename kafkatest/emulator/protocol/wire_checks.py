"""Kafka's read rules for each kind of field, as checks over a request's bytes.

Each check reads only a count, a length or a marker, compares it with the bytes left,
and returns where the field ends; `guard` composes them into one check per kio
schema. A check raises `DecodeError` where Kafka's generated readers refuse the
bytes, and records a same-length rewrite (`Patches`) where Kafka reads a value that
kio would read otherwise.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from kafkatest.emulator.protocol.primitives import DecodeError, read_unsigned_varint32

#: Rewrites to apply to the frame: (offset, replacement of the same length).
Patches = list[tuple[int, bytes]]
#: (buffer, offset, end, patches) -> the offset after the checked field.
Check = Callable[[Any, int, int, Patches], int]

#: Kafka refuses longer strings ("string field X had invalid length").
MAX_STRING_LENGTH = 0x7FFF

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_NULL_LEGACY = {2: b"\xff\xff", 4: b"\xff\xff\xff\xff"}


# -- varints as Kafka reads them ------------------------------------------------------


def five_byte_varint(value: int) -> bytes:
    """`value` (0 <= value < 2^32) as a five-byte varint, the length of the one it replaces."""
    return bytes(
        [
            (value & 0x7F) | 0x80,
            ((value >> 7) & 0x7F) | 0x80,
            ((value >> 14) & 0x7F) | 0x80,
            ((value >> 21) & 0x7F) | 0x80,
            (value >> 28) & 0x0F,
        ]
    )


def varint(buffer: Any, offset: int, end: int, patches: Patches) -> tuple[int, int]:
    """(Kafka's 32-bit signed value, next offset) of the varint at `offset`.

    A value that kio would read otherwise (five bytes whose top bits Kafka drops) is
    rewritten to the five-byte form of Kafka's value, or of 0 where that is negative:
    the caller turns a negative value into null (or refuses it), and kio reads 0 as
    null too.
    """
    if offset < end:
        byte = buffer[offset]
        if byte < 0x80:
            return byte, offset + 1
    value, after = read_unsigned_varint32(buffer, offset)
    if after - offset == 5 and (value < 0 or buffer[offset + 4] > 0x0F):
        patches.append((offset, five_byte_varint(max(value, 0))))
    return value, after


# -- building blocks ------------------------------------------------------------------


def too_many(name: str, count: int, remaining: int) -> DecodeError:
    return DecodeError(
        f"field {name}: tried to allocate a collection of size {count}, "
        f"but there are only {remaining} bytes remaining"
    )


def null_in(name: str) -> DecodeError:
    return DecodeError(f"non-nullable field {name} was serialized as null")


def past_end(name: str, length: int, remaining: int) -> DecodeError:
    return DecodeError(
        f"field {name} has length {length} but only {remaining} bytes remain in the request"
    )


def fixed(size: int) -> Check:
    def check(buffer: Any, offset: int, end: int, patches: Patches) -> int:
        offset += size
        if offset > end:
            raise DecodeError("request ends in the middle of a field")
        return offset

    return check


def boolean(buffer: Any, offset: int, end: int, patches: Patches) -> int:
    """Kafka reads any non-zero byte as true; kio accepts only 0 and 1."""
    if offset >= end:
        raise DecodeError("request ends in the middle of a field")
    if buffer[offset] > 1:
        patches.append((offset, b"\x01"))
    return offset + 1


def length_prefixed(name: str, flexible: bool, nullable: bool, kafka_type: str) -> Check:
    """string (int16 length) or bytes/records (int32 length); compact when flexible."""
    limit = MAX_STRING_LENGTH if kafka_type == "string" else None

    def check_length(length: int, offset: int, end: int) -> int:
        if limit is not None and length > limit:
            raise DecodeError(f"string field {name} had invalid length {length}")
        if length > end - offset:
            raise past_end(name, length, end - offset)
        return offset + length

    if flexible:

        def check_compact(buffer: Any, offset: int, end: int, patches: Patches) -> int:
            stored, offset = varint(buffer, offset, end, patches)
            if stored <= 0:
                if not nullable:
                    raise null_in(name)
                return offset
            return check_length(stored - 1, offset, end)

        return check_compact
    prefix = _INT16 if kafka_type == "string" else _INT32

    def check_legacy(buffer: Any, offset: int, end: int, patches: Patches) -> int:
        if offset + prefix.size > end:
            raise DecodeError(f"request ends before the length of field {name}")
        (length,) = prefix.unpack_from(buffer, offset)
        if length < 0:
            if not nullable:
                raise null_in(name)
            if length != -1:
                patches.append((offset, _NULL_LEGACY[prefix.size]))
            return offset + prefix.size
        return check_length(length, offset + prefix.size, end)

    return check_legacy


def array(name: str, flexible: bool, nullable: bool, element: Check | None, size: int) -> Check:
    """An array of `element`s that take at least `size` bytes each.

    With `element` None the elements are of fixed `size` and are skipped at once.
    """
    least = max(size, 1)

    def check(buffer: Any, offset: int, end: int, patches: Patches) -> int:
        if flexible:
            stored, offset = varint(buffer, offset, end, patches)
            count = stored - 1
        else:
            if offset + 4 > end:
                raise DecodeError(f"request ends before the count of field {name}")
            (count,) = _INT32.unpack_from(buffer, offset)
            if count < -1 and nullable:
                patches.append((offset, _NULL_LEGACY[4]))
            offset += 4
        if count < 0:
            if not nullable:
                raise null_in(name)
            return offset
        remaining = end - offset
        if count * least > remaining:
            raise too_many(name, count, remaining)
        if element is None:
            return offset + count * size
        for _ in range(count):
            offset = element(buffer, offset, end, patches)
        return offset

    return check


def nullable_struct(name: str, inner: Check) -> Check:
    def check(buffer: Any, offset: int, end: int, patches: Patches) -> int:
        if offset >= end:
            raise DecodeError(f"request ends before field {name}")
        marker = buffer[offset]
        if marker >= 0x80:  # negative: Kafka reads null, kio only 0xff
            if marker != 0xFF:
                patches.append((offset, b"\xff"))
            return offset + 1
        return inner(buffer, offset + 1, end, patches)

    return check


def tagged_section(owner: str, known: dict[int, Check]) -> Check:
    def check(buffer: Any, offset: int, end: int, patches: Patches) -> int:
        if offset < end and buffer[offset] == 0:
            return offset + 1  # no tagged fields: the usual case
        count, offset = varint(buffer, offset, end, patches)
        # A negative count is no fields to Kafka; a field takes two bytes at least.
        if count * 2 > end - offset:
            raise too_many(f"{owner} tagged fields", count, end - offset)
        for _ in range(count):
            tag, offset = varint(buffer, offset, end, patches)
            if tag < 0:
                raise DecodeError(f"{owner} has a tagged field with negative tag {tag}")
            size, offset = varint(buffer, offset, end, patches)
            if size < 0 or size > end - offset:
                raise past_end(f"{owner} tag {tag}", size, end - offset)
            field_end = offset + size
            inner = known.get(tag)
            if inner is not None and inner(buffer, offset, field_end, patches) != field_end:
                raise DecodeError(f"{owner} tagged field {tag} does not fill its {size} bytes")
            offset = field_end
        return offset

    return check
