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

from kafkatest.emulator.protocol.wire_checks import (
    Check,
    Patches,
    array,
    boolean,
    fixed,
    length_prefixed,
    nullable_struct,
    tagged_section,
)

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
        steps.append(tagged_section(entity_type.__name__, tagged))

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
        return nullable_struct(name, inner) if nullable and not tagged else inner
    if isinstance(kind, EntityTupleField):
        return array(name, flexible, nullable, _entity_check(kind.type_), min_size(kind.type_))
    kafka_type = field.metadata["kafka_type"]
    if isinstance(kind, PrimitiveTupleField):
        if kafka_type in _VARIABLE:
            element_nullable = _nullable(_element_annotation(field.type))
            element = length_prefixed(name, flexible, element_nullable, kafka_type)
            return array(name, flexible, nullable, element, 1 if flexible else 2)
        if kafka_type == "bool":
            return array(name, flexible, nullable, boolean, 1)
        return array(name, flexible, nullable, None, FIXED_SIZES[kafka_type])
    assert isinstance(kind, PrimitiveField)
    if kafka_type in _VARIABLE:
        return length_prefixed(name, flexible, nullable, kafka_type)
    if kafka_type == "bool":
        return boolean
    return _Fixed(FIXED_SIZES[kafka_type])


class _Fixed:
    """A fixed-size field; runs of them become one step in `_merge_fixed`."""

    __slots__ = ("check", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self.check = fixed(size)

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
            steps.append(fixed(run))
            run = 0
        steps.append(check)
    if run:
        steps.append(fixed(run))
    return steps
