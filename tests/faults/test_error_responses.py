"""Injected errors can answer every API version the emulator advertises."""

from __future__ import annotations

import dataclasses
import datetime
import typing
from typing import Any

import pytest
from kio.index import load_payload_module
from kio.schema.errors import ErrorCode
from kio.static.constants import EntityType

from kafkatest.emulator import EmulatorState, load_handlers
from kafkatest.emulator.protocol.error_responses import error_response
from kafkatest.emulator.protocol.messages import encode_response
from kafkatest.emulator.protocol.request_scope import entity_tuples
from kafkatest.emulator.server.context import RequestContext

ADVERTISED = [
    (spec.api_key, version)
    for spec in sorted(load_handlers().values(), key=lambda s: s.api_key)
    for version in range(spec.min_version, spec.max_version + 1)
]


def _sample(cls: type, depth: int = 0) -> Any:
    """A request of `cls` with one entry in every nested list, named like a topic."""
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        inner = typing.get_args(args[0]) if args and typing.get_origin(args[0]) is tuple else ()
        if typing.get_origin(hint) is tuple:
            inner = typing.get_args(hint)
        kafka_type = f.metadata.get("kafka_type", "")
        if inner and dataclasses.is_dataclass(inner[0]):
            values[f.name] = (_sample(inner[0], depth + 1),) if depth < 3 else ()
        elif inner:
            values[f.name] = ("t",) if kafka_type == "string" else (0,)
        elif dataclasses.is_dataclass(hint):
            values[f.name] = _sample(hint, depth + 1)
        elif f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            continue
        elif kafka_type == "string" or hint is str:
            values[f.name] = "t"
        elif kafka_type in ("bytes", "records"):
            values[f.name] = b""
        elif kafka_type == "bool":
            values[f.name] = False
        elif kafka_type.startswith("timedelta"):
            values[f.name] = datetime.timedelta(0)
        elif kafka_type == "uuid":
            values[f.name] = None
        else:
            values[f.name] = 0
    return cls(**values)


@pytest.mark.parametrize(("api_key", "version"), ADVERTISED)
def test_every_advertised_version_can_carry_an_injected_error(api_key: int, version: int) -> None:
    module = load_payload_module(api_key, version, EntityType.request)
    request_cls = next(
        v
        for v in vars(module).values()
        if isinstance(v, type) and getattr(v, "__type__", None) is EntityType.request
    )
    request = _sample(request_cls)
    ctx = RequestContext(EmulatorState(), 1, api_key, version, 7, "c", "peer", 1)

    response = error_response(ctx, request, ErrorCode.not_leader_or_follower)

    assert encode_response(response)
    codes = _error_codes(response)
    assert ErrorCode.not_leader_or_follower in codes, (api_key, version, response)


def _error_codes(entity: Any) -> list[ErrorCode]:
    found = [
        getattr(entity, f.name)
        for f in dataclasses.fields(entity)
        if f.metadata.get("kafka_type") == "error_code"
    ]
    for _name, items in entity_tuples(entity):
        for item in items:
            found.extend(_error_codes(item))
    return found
