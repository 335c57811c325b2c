"""Every fault is checked before it is made: one that cannot fire is refused.

A rule aimed at a topic that does not exist, a partition past the topic's end or
an API the emulator does not serve would sit in the hook and never hit; the test
would then pass without its fault. A negative clock step or a latency longer
than any test waits would break the run in a confusing place. So each `Faults`
method checks its arguments here first and raises `InvalidFault`, whose message
names the action, the value and what would be accepted. The control interface
runs the same methods, so HTTP callers get the same messages (as status 400).

Adding a fault action (``compact_now``, ``hung_transaction``, ...):

1. In its `Faults` method, check before acting::

       def compact_now(self, topic: str, partition: int | None = None) -> None:
           check.target(self.broker, "compact_now", topic, partition)
           ...

   `target` / `existing_topic` look the topic up on every backend (emulator
   state, or Kafka's metadata through the admin client, never auto-creating);
   `count`, `non_negative`, `at_most` check numbers, `api` and `error` names.
   Raise `InvalidFault` yourself for anything specific to the action.
2. List it in `control_actions.ACTIONS` with its parameter types, so
   ``POST /faults/compact_now`` and ``kafkatest fault compact_now`` accept it.

Checks run before anything is changed, so a refused fault leaves no trace.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import math
import types
import typing
from collections.abc import Iterable
from functools import cache
from typing import Any

from kafkatest.brokers.base import Broker
from kafkatest.brokers.lookup import topic_partitions
from kafkatest.emulator.state.topics import MAX_PARTITIONS
from kafkatest.errors import BrokerError

#: Longer than any test waits (pytest's per-test time-out here is 600 s, Kafka
#: clients give up on a request after 30 s): a request that must never be answered
#: is `drop_connections` or `pause`, not a latency.
MAX_LATENCY_MS = 300_000
#: The emulator's per-topic partition limit, applied on every backend: more
#: partitions than this is a mistake in a test, not a fault.
PARTITION_LIMIT = MAX_PARTITIONS
#: How many existing names an error message lists.
_LISTED = 10


class InvalidFault(BrokerError):
    """A fault that cannot fire, or that names something that does not exist."""


# -- numbers --------------------------------------------------------------------------


def _number(action: str, name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidFault(f"{action}: {name} must be a whole number, not {value!r}")
    return value


def count(action: str, name: str, value: object, minimum: int = 1) -> int:
    """A whole number >= `minimum` (``times``, ``total``, ``partitions``...)."""
    number = _number(action, name, value)
    if number < minimum:
        raise InvalidFault(f"{action}: {name} must be at least {minimum}, not {number}")
    return number


def times(action: str, value: object) -> int | None:
    """How many requests a rule hits: None (until cleared) or at least 1."""
    if value is None:
        return None
    number = _number(action, "times", value)
    if number < 1:
        raise InvalidFault(
            f"{action}: times must be at least 1 (or None for every request until "
            f"cleared), not {number}: a rule with no hits left never fires"
        )
    return number


def non_negative(action: str, name: str, value: object) -> int:
    number = _number(action, name, value)
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


# -- topics and partitions (every backend) ---------------------------------------------


def _topic_names(broker: Broker) -> list[str]:
    try:
        if broker.backend == "emulator":
            state = broker.state  # type: ignore[attr-defined]
            return broker.call(  # type: ignore[attr-defined,no-any-return]
                lambda: sorted(t.name for t in state.topics if not t.is_internal)
            )
        return broker.list_topics()
    except Exception:  # only for the message: a listing failure must not hide the real error
        return []


def missing_topic(broker: Broker, action: str, topic: str) -> InvalidFault:
    """The error for a topic that does not exist: what exists, and the nearest name."""
    names = _topic_names(broker)
    close = difflib.get_close_matches(topic, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    listed = ", ".join(names[:_LISTED]) + (
        f" and {len(names) - _LISTED} more" if len(names) > _LISTED else ""
    )
    return InvalidFault(
        f"{action}: topic {topic!r} does not exist (topics: {listed or 'none'}){hint}"
    )


def existing_topic(broker: Broker, action: str, topic: object) -> int:
    """Refuse a missing topic; its partition count."""
    if not isinstance(topic, str) or not topic:
        raise InvalidFault(f"{action}: topic must be a topic name, not {topic!r}")
    partitions = topic_partitions(broker, topic)
    if partitions is None:
        raise missing_topic(broker, action, topic)
    return partitions


def _partition_range(topic: str, partitions: int) -> str:
    return (
        f"topic {topic!r} has partitions 0..{partitions - 1}"
        if partitions > 1
        else (f"topic {topic!r} has only partition 0")
    )


def target(broker: Broker, action: str, topic: object, partition: object = None) -> None:
    """Refuse a topic that does not exist or a partition outside it.

    `topic` None means "every topic" (then `partition` must be None too).
    """
    if topic is None:
        if partition is not None:
            raise InvalidFault(f"{action}: a partition needs its topic (give topic too)")
        return
    partitions = existing_topic(broker, action, topic)
    if partition is None:
        return
    index = _number(action, "partition", partition)
    if not 0 <= index < partitions:
        raise InvalidFault(
            f"{action}: partition {index} does not exist: {_partition_range(str(topic), partitions)}"
        )


def existing_partitions(broker: Broker, action: str, topic: str, wanted: Iterable[int]) -> int:
    """Refuse partitions outside the topic (naming them and which exist); the count."""
    indexes = [_number(action, "partition", p) for p in wanted]
    partitions = existing_topic(broker, action, topic)
    missing = sorted(p for p in indexes if not 0 <= p < partitions)
    if missing:
        raise InvalidFault(
            f"{action}: partition(s) {missing} do not exist: {_partition_range(topic, partitions)}"
        )
    return partitions


# -- API and error names ------------------------------------------------------------------


def api(action: str, value: object, served: Iterable[int] | None = None) -> int:
    """An API name or key -> the key; with `served`, refuse one the broker never sees."""
    from kafkatest.faults.rules import api_key, api_name

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


def error(action: str, value: object) -> Any:
    """An error name or code -> kio's ErrorCode; NONE is refused (it is no fault)."""
    from kio.schema.errors import ErrorCode

    from kafkatest.faults.rules import error_code

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
    from kafkatest.faults.rules import api_name

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

    from kafkatest.emulator.server.handlers import load_handlers
    from kafkatest.faults.request_scope import PARTITION_FIELDS, PARTITION_LIST_FIELDS, TOPIC_FIELDS

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
