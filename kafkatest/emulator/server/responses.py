"""Helpers for handlers building kio responses across many versions.

kio has one dataclass per (API, version), each with only that version's fields.
`make` drops the values a version lacks, so a handler can describe the newest
response once and serve every advertised version; `respond` adds what most answers
share (no throttling, an error and its message), `make_from` a state record's fields.
"""

from __future__ import annotations

import dataclasses
import datetime
from functools import cache
from types import ModuleType
from typing import Any

from kio.index import load_payload_module
from kio.schema.errors import ErrorCode
from kio.static.constants import EntityType

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.state.errors import StateError

NO_THROTTLE = datetime.timedelta(0)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


@cache
def _response_module(api_key: int, version: int) -> ModuleType:
    return load_payload_module(api_key, version, EntityType.response)


def response_types(ctx: RequestContext) -> ModuleType:
    """The kio module holding the response classes for this request's version."""
    return _response_module(ctx.api_key, ctx.api_version)


@cache
def _field_names(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(cls))


def make(cls: type, **values: Any) -> Any:
    """Instantiate `cls` with the values it has fields for; the rest are ignored."""
    names = _field_names(cls)
    return cls(**{k: v for k, v in values.items() if k in names})


def make_from(cls: type, record: object, **values: Any) -> Any:
    """`make` with each field of `cls` that `record` has an attribute of that name for
    (the emulator's records use Kafka's field names), then `values` (which win)."""
    names = _field_names(cls)
    copied = {name: getattr(record, name) for name in names if hasattr(record, name)}
    return make(cls, **{**copied, **values})


def respond(
    cls: type, error: ErrorCode = ErrorCode.none, message: str | None = None, **values: Any
) -> Any:
    """`make` for the responses and results that carry an error: `error` with its
    `message`, and no throttling, where `cls` has those fields (kio's defaults too)."""
    defaults = {"throttle_time": NO_THROTTLE, "error_code": error, "error_message": message}
    return make(cls, **{**defaults, **values})


def error_code_of(exc: StateError) -> ErrorCode:
    return ErrorCode[exc.error_name]


def datetime_at_ms(ms: int) -> datetime.datetime:
    """kio's non-optional datetime fields, where Kafka may write -1 (no time)."""
    return _EPOCH + datetime.timedelta(milliseconds=ms)


def datetime_from_ms(ms: int) -> datetime.datetime | None:
    """kio's datetime fields; -1 (no timestamp) is None."""
    if ms < 0:
        return None
    return _EPOCH + datetime.timedelta(milliseconds=ms)
