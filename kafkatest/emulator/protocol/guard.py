"""A pass over a request's bytes before kio decodes them: Kafka's read rules, no allocation.

kio's native decoder trusts the counts it reads: an array count sizes an
allocation before a single element is read, so a flexible request claiming 2^32
elements aborted the whole interpreter. Kafka's generated readers (e.g.
``MetadataRequestData.read``) check every count and length as they go; this pass
applies the same rules, from the same kio dataclasses kio decodes with, reading
only counts, lengths and markers. It raises `DecodeError` (the connection closes,
as Kafka closes it when a request cannot be parsed) for

- an array whose count is more than the bytes left ("Tried to allocate a
  collection of size N, but there are only M bytes remaining"); elements that
  cannot be smaller than k bytes must fit k each, so no count a client picks sizes
  an allocation beyond the frame it sent;
- a string longer than 32767 bytes or running past the frame, bytes or records
  running past the frame;
- a null where the schema allows none ("non-nullable field X was serialized as
  null"), so handlers never meet a None where the schema promises a value;
- a varint of more than five bytes, a negative tagged-field size, or a known
  tagged field whose content does not fill exactly its declared size.

Where Kafka *accepts* an encoding kio would read differently, the bytes are
rewritten (same length, so every offset stays put) to the canonical encoding of
what Kafka reads: a count, length or tag of 2^31 or more wraps to a negative
32-bit int in Kafka, which its readers take as null (or, for a tagged-field count,
as none); a legacy length below -1 is null too; a nullable struct's marker is null
whenever negative; a boolean is true whenever non-zero.

Each check is a comparison per count or length: the pass costs a fraction of
decoding, and nothing in it is sized by a value from the wire.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable
from functools import cache
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin

from kio.serial._introspect import (
    EntityField,
    EntityTupleField,
    PrimitiveField,
    PrimitiveTupleField,
    classify_field,
    get_field_tag,
)
from kio.static.protocol import Entity

from kafkatest.emulator.protocol.primitives import DecodeError, read_unsigned_varint32

#: Rewrites to apply to the frame: (offset, replacement of the same length).
Patches = list[tuple[int, bytes]]
#: (buffer, offset, end, patches) -> the offset after the checked field.
Check = Callable[[Any, int, int, Patches], int]

#: Bytes taken by each fixed-size kio type.
FIXED_SIZES = {
    "bool": 1,
    "int8": 1,
    "int16": 2,
    "uint16": 2,
    "error_code": 2,
    "int32": 4,
    "uint32": 4,
    "timedelta_i32": 4,
    "int64": 8,
    "uint64": 8,
    "timedelta_i64": 8,
    "datetime_i64": 8,
    "float64": 8,
    "uuid": 16,
}
_VARIABLE = frozenset({"string", "bytes", "records"})
#: Kafka refuses longer strings ("string field X had invalid length").
MAX_STRING_LENGTH = 0x7FFF

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_NULL_LEGACY = {2: b"\xff\xff", 4: b"\xff\xff\xff\xff"}


def checked_frame(schema: type[Entity], frame: bytes, offset: int) -> bytes:
    """`frame`, or a rewritten copy, that kio decodes as Kafka would read it.

    Raises `DecodeError` where Kafka refuses to parse the request body at `offset`.
    """
    _end, patches = scan(schema, frame, offset)
    if not patches:
        return frame
    patched = bytearray(frame)
    for at, replacement in patches:
        patched[at : at + len(replacement)] = replacement
    return bytes(patched)


def scan(schema: type[Entity], frame: bytes, offset: int) -> tuple[int, Patches]:
    """(Where the body ends as kio reads it, the rewrites it needs); see `checked_frame`."""
    patches: Patches = []
    return _entity_check(schema)(frame, offset, len(frame), patches), patches


# -- varints as Kafka reads them ------------------------------------------------------


def _five_bytes(value: int) -> bytes:
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


def _varint(buffer: Any, offset: int, end: int, patches: Patches) -> tuple[int, int]:
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
        patches.append((offset, _five_bytes(max(value, 0))))
    return value, after


# -- building blocks ------------------------------------------------------------------


def _too_many(name: str, count: int, remaining: int) -> DecodeError:
    return DecodeError(
        f"field {name}: tried to allocate a collection of size {count}, "
        f"but there are only {remaining} bytes remaining"
    )


def _null_in(name: str) -> DecodeError:
    return DecodeError(f"non-nullable field {name} was serialized as null")


def _past_end(name: str, length: int, remaining: int) -> DecodeError:
    return DecodeError(
        f"field {name} has length {length} but only {remaining} bytes remain in the request"
    )


def _fixed(size: int) -> Check:
    def check(buffer: Any, offset: int, end: int, patches: Patches) -> int:
        offset += size
        if offset > end:
            raise DecodeError("request ends in the middle of a field")
        return offset

    return check


def _boolean(buffer: Any, offset: int, end: int, patches: Patches) -> int:
    """Kafka reads any non-zero byte as true; kio accepts only 0 and 1."""
    if offset >= end:
        raise DecodeError("request ends in the middle of a field")
    if buffer[offset] > 1:
        patches.append((offset, b"\x01"))
    return offset + 1


def _length_prefixed(name: str, flexible: bool, nullable: bool, kafka_type: str) -> Check:
    """string (int16 length) or bytes/records (int32 length); compact when flexible."""
    limit = MAX_STRING_LENGTH if kafka_type == "string" else None

    def check_length(length: int, offset: int, end: int) -> int:
        if limit is not None and length > limit:
            raise DecodeError(f"string field {name} had invalid length {length}")
        if length > end - offset:
            raise _past_end(name, length, end - offset)
        return offset + length

    if flexible:

        def check_compact(buffer: Any, offset: int, end: int, patches: Patches) -> int:
            stored, offset = _varint(buffer, offset, end, patches)
            if stored <= 0:
                if not nullable:
                    raise _null_in(name)
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
                raise _null_in(name)
            if length != -1:
                patches.append((offset, _NULL_LEGACY[prefix.size]))
            return offset + prefix.size
        return check_length(length, offset + prefix.size, end)

    return check_legacy


def _array(name: str, flexible: bool, nullable: bool, element: Check | None, size: int) -> Check:
    """An array of `element`s that take at least `size` bytes each.

    With `element` None the elements are of fixed `size` and are skipped at once.
    """
    least = max(size, 1)

    def check(buffer: Any, offset: int, end: int, patches: Patches) -> int:
        if flexible:
            stored, offset = _varint(buffer, offset, end, patches)
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
                raise _null_in(name)
            return offset
        remaining = end - offset
        if count * least > remaining:
            raise _too_many(name, count, remaining)
        if element is None:
            return offset + count * size
        for _ in range(count):
            offset = element(buffer, offset, end, patches)
        return offset

    return check


def _nullable_struct(name: str, inner: Check) -> Check:
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


def _tagged_section(owner: str, known: dict[int, Check]) -> Check:
    def check(buffer: Any, offset: int, end: int, patches: Patches) -> int:
        if offset < end and buffer[offset] == 0:
            return offset + 1  # no tagged fields: the usual case
        count, offset = _varint(buffer, offset, end, patches)
        # A negative count is no fields to Kafka; a field takes two bytes at least.
        if count * 2 > end - offset:
            raise _too_many(f"{owner} tagged fields", count, end - offset)
        for _ in range(count):
            tag, offset = _varint(buffer, offset, end, patches)
            if tag < 0:
                raise DecodeError(f"{owner} has a tagged field with negative tag {tag}")
            size, offset = _varint(buffer, offset, end, patches)
            if size < 0 or size > end - offset:
                raise _past_end(f"{owner} tag {tag}", size, end - offset)
            field_end = offset + size
            inner = known.get(tag)
            if inner is not None and inner(buffer, offset, field_end, patches) != field_end:
                raise DecodeError(f"{owner} tagged field {tag} does not fill its {size} bytes")
            offset = field_end
        return offset

    return check


# -- from kio dataclasses -------------------------------------------------------------


def _nullable(annotation: Any) -> bool:
    return get_origin(annotation) in (UnionType, Union) and NoneType in get_args(annotation)


def _element_annotation(annotation: Any) -> Any:
    """The element type of `tuple[X, ...]` or `tuple[X, ...] | None`."""
    if _nullable(annotation):
        annotation = next(a for a in get_args(annotation) if a is not NoneType)
    return get_args(annotation)[0]


@cache
def _entity_check(entity_type: type[Entity]) -> Check:
    flexible = bool(entity_type.__flexible__)
    regular: list[Check] = []
    tagged: dict[int, Check] = {}
    for field in dataclasses.fields(entity_type):
        tag = get_field_tag(field)
        if tag is None:
            regular.append(_field_check(entity_type, field, flexible, tagged=False))
        else:
            tagged[tag] = _field_check(entity_type, field, flexible, tagged=True)
    steps = _merge_fixed(regular)
    if flexible:
        steps.append(_tagged_section(entity_type.__name__, tagged))

    def check(buffer: Any, offset: int, end: int, patches: Patches) -> int:
        for step in steps:
            offset = step(buffer, offset, end, patches)
        return offset

    return check


@cache
def min_size(entity_type: type[Entity]) -> int:
    """The fewest bytes one `entity_type` can take on the wire."""
    flexible = bool(entity_type.__flexible__)
    total = 1 if flexible else 0  # the tagged-field count
    for field in dataclasses.fields(entity_type):
        if get_field_tag(field) is None:
            total += _field_min_size(field, flexible)
    return total


def _field_min_size(field: dataclasses.Field, flexible: bool) -> int:
    kind = classify_field(field)
    if kind.is_array:
        return 1 if flexible else 4
    if isinstance(kind, EntityField):
        return 1 if _nullable(field.type) else min_size(kind.type_)
    kafka_type = field.metadata["kafka_type"]
    if kafka_type in _VARIABLE:
        if flexible:
            return 1
        return 2 if kafka_type == "string" else 4
    return FIXED_SIZES[kafka_type]


def _field_check(
    entity_type: type[Entity], field: dataclasses.Field, flexible: bool, tagged: bool
) -> Check:
    name = f"{entity_type.__name__}.{field.name}"
    kind = classify_field(field)
    nullable = _nullable(field.type)
    if isinstance(kind, EntityField):
        inner = _entity_check(kind.type_)
        # A tagged struct has no presence marker: its tag's presence is the marker.
        return _nullable_struct(name, inner) if nullable and not tagged else inner
    if isinstance(kind, EntityTupleField):
        return _array(name, flexible, nullable, _entity_check(kind.type_), min_size(kind.type_))
    kafka_type = field.metadata["kafka_type"]
    if isinstance(kind, PrimitiveTupleField):
        if kafka_type in _VARIABLE:
            element_nullable = _nullable(_element_annotation(field.type))
            element = _length_prefixed(name, flexible, element_nullable, kafka_type)
            return _array(name, flexible, nullable, element, 1 if flexible else 2)
        if kafka_type == "bool":
            return _array(name, flexible, nullable, _boolean, 1)
        return _array(name, flexible, nullable, None, FIXED_SIZES[kafka_type])
    assert isinstance(kind, PrimitiveField)
    if kafka_type in _VARIABLE:
        return _length_prefixed(name, flexible, nullable, kafka_type)
    if kafka_type == "bool":
        return _boolean
    return _Fixed(FIXED_SIZES[kafka_type])


class _Fixed:
    """A fixed-size field; runs of them become one step in `_merge_fixed`."""

    __slots__ = ("check", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self.check = _fixed(size)

    def __call__(self, buffer: Any, offset: int, end: int, patches: Patches) -> int:
        return self.check(buffer, offset, end, patches)


def _merge_fixed(checks: list[Check]) -> list[Check]:
    """Consecutive fixed-size fields become one offset step (and one bounds check)."""
    steps: list[Check] = []
    run = 0
    for check in checks:
        if isinstance(check, _Fixed):
            run += check.size
            continue
        if run:
            steps.append(_fixed(run))
            run = 0
        steps.append(check)
    if run:
        steps.append(_fixed(run))
    return steps
