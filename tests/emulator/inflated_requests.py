"""Requests of any API whose arrays name one entry many times, built from kio's schemas.

Every field gets a plain value (strings name the topic, group or id `NAME`, numbers
are 0), nested arrays hold one element, and the request's own arrays hold `count`
copies: the shape of a client naming one thing over and over, for every API at once.
"""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any

from kio.schema.errors import ErrorCode
from kio.serial._introspect import (
    EntityField,
    EntityTupleField,
    PrimitiveTupleField,
    classify_field,
)
from raw_client import encode, request_frame

from kafkatest.emulator.protocol.messages import request_schema

NAME = "repeated"
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def _plain(field: dataclasses.Field[Any]) -> Any:
    kind = field.metadata.get("kafka_type")
    if kind == "string":
        return NAME
    if kind == "bool":
        return False
    if kind in ("uuid", "records"):
        return None
    if kind == "bytes":
        return b""
    if kind == "float64":
        return 0.0
    if kind in ("timedelta_i32", "timedelta_i64"):
        return datetime.timedelta(0)
    if kind == "datetime_i64":
        return _EPOCH
    if kind == "error_code":
        return ErrorCode.none
    try:
        return field.type(0)  # type: ignore[operator]  # kio's int newtypes
    except TypeError:
        return 0


def inflated(entity_type: type, count: int, top: bool = True) -> Any:
    """An instance of `entity_type` whose own arrays (if `top`) hold `count` copies."""
    values: dict[str, Any] = {}
    for field in dataclasses.fields(entity_type):
        kind = classify_field(field)
        if isinstance(kind, EntityTupleField):
            values[field.name] = (inflated(kind.type_, count, top=False),) * (count if top else 1)
        elif isinstance(kind, EntityField):
            values[field.name] = inflated(kind.type_, count, top=False)
        elif isinstance(kind, PrimitiveTupleField):
            values[field.name] = (_plain(field),) * (count if top else 1)
        else:
            values[field.name] = _plain(field)
    return entity_type(**values)


def inflated_frame(api_key: int, version: int, count: int) -> bytes:
    """The request frame (without its size) of `inflated` for (api_key, version)."""
    schema = request_schema(api_key, version)
    assert schema is not None
    return request_frame(api_key, version, 7, encode(inflated(schema, count)))[4:]
