"""The request-level checks every fault rule passes before it is added.

A rule that cannot fire (an API the emulator does not serve, a topic filter on
an API whose requests never name topics, an error code of NONE, a latency longer
than any test waits) would sit in the hook and never hit; the test would then
pass without its fault. These checks refuse it with `InvalidFault`, whose message
names the action, the value and what would be accepted. They need nothing but
the codec and the emulator's own handlers; the checks that look a topic up on a
running broker of either backend are the harness's (`kafkatest.faults.validation`).
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import types
import typing
from collections.abc import Iterable
from functools import cache
from typing import Any

from kafkatest import limits
from kafkatest.emulator.control.errors import InvalidFault
from kafkatest.emulator.control.rules import api_key, api_name, error_code
from kafkatest.emulator.protocol.request_scope import (
    PARTITION_FIELDS,
    PARTITION_LIST_FIELDS,
    TOPIC_FIELDS,
)
from kafkatest.emulator.server.handlers import load_handlers

#: Longer than any test waits (`kafkatest.limits.MAX_LATENCY_MS`): a request that must
#: never be answered is `drop_connections` or `pause`, not a latency.
MAX_LATENCY_MS: int = limits.MAX_LATENCY_MS
#: The emulator's per-topic partition limit, applied on every backend: more
#: partitions than this is a mistake in a test, not a fault.
PARTITION_LIMIT: int = limits.MAX_PARTITIONS


# -- numbers --------------------------------------------------------------------------


def whole_number(action: str, name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidFault(f"{action}: {name} must be a whole number, not {value!r}")
    return value


def count(action: str, name: str, value: object, minimum: int = 1) -> int:
    """A whole number >= `minimum` (``times``, ``total``, ``partitions``...)."""
    number = whole_number(action, name, value)
    if number < minimum:
        raise InvalidFault(f"{action}: {name} must be at least {minimum}, not {number}")
    return number


def times(action: str, value: object) -> int | None:
    """How many requests a rule hits: None (until cleared) or at least 1."""
    if value is None:
        return None
    number = whole_number(action, "times", value)
    if number < 1:
        raise InvalidFault(
            f"{action}: times must be at least 1 (or None for every request until "
            f"cleared), not {number}: a rule with no hits left never fires"
        )
    return number


def non_negative(action: str, name: str, value: object) -> int:
    number = whole_number(action, name, value)
    if number < 0:
        raise InvalidFault(f"{action}: {name} cannot be negative ({number})")
    return number


def at_most(action: str, name: str, value: int, limit: int, why: str) -> int:
    if value > limit:
        raise InvalidFault(f"{action}: {name} {value} is over the limit of {limit}: {why}")
    return value


def latency_ms(action: str, value: object) -> int:
    delay = non_negative(action, "delay_ms", value)
    return at_most(
        action,
        "delay_ms",
        delay,
        MAX_LATENCY_MS,
        "no test waits that long (clients time a request out after 30 s); to make a "
        "request go unanswered use drop_connections, lose_produce_acks or pause",
    )


def partition_total(action: str, name: str, value: object) -> int:
    total = count(action, name, value)
    return at_most(action, name, total, PARTITION_LIMIT, "kafkatest refuses topics that large")


def finite(action: str, name: str, value: object) -> float:
    """A real number (no NaN, no infinity)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidFault(f"{action}: {name} must be a finite number, not {value!r}")
    return float(value)


# -- API and error names ------------------------------------------------------------------


def api(action: str, value: object, served: Iterable[int] | None = None) -> int:
    """An API name or key -> the key; with `served`, refuse one the broker never sees."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InvalidFault(f"{action}: api must be a Kafka API name or key, not {value!r}")
    key = api_key(value)
    if served is not None:
        keys = sorted(served)
        if key not in keys:
            names = ", ".join(api_name(k) for k in keys)
            raise InvalidFault(
                f"{action}: the emulator does not serve {api_name(key)} (API key {key}), so no "
                f"client sends it and the rule would never fire; served: {names}"
            )
    return key


def served_api(action: str, value: object) -> int:
    """An API name or key -> the key, refused if the emulator does not serve it."""
    return api(action, value, served=load_handlers())


def error(action: str, value: object) -> Any:
    """An error name or code -> kio's ErrorCode; NONE is refused (it is no fault)."""
    from kio.schema.errors import ErrorCode

    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InvalidFault(f"{action}: error must be a Kafka error name or code, not {value!r}")
    code = error_code(value)
    if code == ErrorCode.none:
        raise InvalidFault(
            f"{action}: error NONE (0) is a success, not a fault; name an error such as "
            "NOT_LEADER_OR_FOLLOWER (6)"
        )
    return code


def rule_scope(action: str, key: int, topic: object, partition: object) -> None:
    """Refuse a topic or partition filter on an API whose requests never name one."""
    if topic is None:
        return
    topics, partitions = _scope_of(key)
    if not topics:
        raise InvalidFault(
            f"{action}: {api_name(key)} requests do not name topics, so a rule for topic "
            f"{topic!r} would never fire; leave topic out to hit every {api_name(key)} request"
        )
    if partition is not None and not partitions:
        raise InvalidFault(
            f"{action}: {api_name(key)} requests name topics but not partitions, so a rule "
            f"for partition {partition} would never fire; leave partition out"
        )


@cache
def _scope_of(key: int) -> tuple[bool, bool]:
    """Whether any served version of API `key` names topics / partitions where the
    fault hook looks (`request_scope.touches`: top-level topic entries)."""
    from kio.schema.index import EntityType, api_key_map, schema_name_map

    handler = load_handlers().get(key)
    versions = schema_name_map.get(api_key_map.get(key, ""), {})
    served = [v for v in versions if handler is None or handler.supports(v)]
    topics = partitions = False
    for version in served:
        module, _, name = versions[version][EntityType.request].partition(":")
        request = getattr(importlib.import_module(module), name)
        for entry in _entity_tuples(request):
            fields = {f.name for f in dataclasses.fields(entry)}
            if not fields & {*TOPIC_FIELDS, "topic_id"}:
                continue
            topics = True
            nested = (
                {f.name for f in dataclasses.fields(inner)} for inner in _entity_tuples(entry)
            )
            if fields & set(PARTITION_LIST_FIELDS) or any(
                n & set(PARTITION_FIELDS) for n in nested
            ):
                partitions = True
    return topics, partitions


def _entity_tuples(entity: type) -> list[type]:
    """Entity classes held in tuple fields of `entity` (optional ones too)."""
    hints = typing.get_type_hints(entity)
    out: list[type] = []
    for f in dataclasses.fields(entity):
        hint = hints[f.name]
        options = (
            typing.get_args(hint)
            if typing.get_origin(hint) in (typing.Union, types.UnionType)
            else (hint,)
        )
        for option in options:
            args = typing.get_args(option) if typing.get_origin(option) is tuple else ()
            if args and isinstance(args[0], type) and dataclasses.is_dataclass(args[0]):
                out.append(args[0])
    return out
