"""Which topics and partitions a decoded request touches, and cutting it down.

Kafka requests nest the same way across APIs: a tuple of topic entries (named
``name`` or ``topic``, or identified by ``topic_id``), each with a tuple of
partition entries (``partition_index``, ``partition`` or ``index``). Walking that
shape generically lets one error rule aim at a topic or partition of any API,
and lets the hook answer only the aimed-at part with an error while the rest of
the same request is served normally.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any, Protocol


class TopicsById(Protocol):
    """What a request's ``topic_id`` is resolved against: the broker state, whose
    `topics` are the topics it holds (this sans-IO module never imports the state)."""

    @property
    def topics(self) -> Iterable[Any]: ...


TOPIC_FIELDS = ("name", "topic")
PARTITION_FIELDS = ("partition_index", "partition", "index")
#: Tuples of plain partition numbers (OffsetFetch before v8, for one).
PARTITION_LIST_FIELDS = ("partition_indexes", "partitions")


def entity_tuples(entity: Any) -> list[tuple[str, tuple[Any, ...]]]:
    """(field, value) of each field holding a tuple of nested entities."""
    out = []
    for f in dataclasses.fields(entity):
        value = getattr(entity, f.name)
        if isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
            out.append((f.name, value))
    return out


def topic_name(entity: Any, state: TopicsById | None) -> str | None:
    for name in TOPIC_FIELDS:
        value = getattr(entity, name, None)
        if isinstance(value, str) and value:
            return value
    topic_id = getattr(entity, "topic_id", None)
    if topic_id is not None and state is not None:
        found = next((t for t in state.topics if t.topic_id == topic_id), None)
        return None if found is None else found.name
    return None


def partition_of(entity: Any) -> int | None:
    for name in PARTITION_FIELDS:
        value = getattr(entity, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _is_topic_level(items: tuple[Any, ...]) -> bool:
    first = items[0]
    return any(hasattr(first, name) for name in (*TOPIC_FIELDS, "topic_id"))


def _partition_matches(topic_entry: Any, partition: int) -> bool:
    for _name, parts in entity_tuples(topic_entry):
        if any(partition_of(p) == partition for p in parts):
            return True
    for name in PARTITION_LIST_FIELDS:
        value = getattr(topic_entry, name, None)
        if isinstance(value, tuple) and partition in value:
            return True
    return False


def touches(request: Any, topic: str, partition: int | None, state: TopicsById) -> bool:
    """Whether `request` names `topic` (and `partition`, when given)."""
    for _name, items in entity_tuples(request):
        if not _is_topic_level(items):
            continue
        for entry in items:
            if topic_name(entry, state) != topic:
                continue
            if partition is None or _partition_matches(entry, partition):
                return True
    return False


def cut(
    request: Any, topic: str, partition: int | None, state: TopicsById, keep_matching: bool
) -> tuple[Any, bool]:
    """The request restricted to (or, with keep_matching False, stripped of) the target.

    Returns the new request and whether any topic entry is left in it.
    """
    changes: dict[str, tuple[Any, ...]] = {}
    left = False
    for field_name, items in entity_tuples(request):
        if not _is_topic_level(items):
            continue
        kept = []
        for entry in items:
            is_topic = topic_name(entry, state) == topic
            if partition is None or not is_topic:
                if is_topic == keep_matching:
                    kept.append(entry)
                continue
            narrowed = _cut_partitions(entry, partition, keep_matching)
            if narrowed is not None:
                kept.append(narrowed)
        changes[field_name] = tuple(kept)
        left = left or bool(kept)
    return dataclasses.replace(request, **changes), left


def _cut_partitions(entry: Any, partition: int, keep_matching: bool) -> Any | None:
    changes: dict[str, tuple[Any, ...]] = {}
    for field_name, parts in entity_tuples(entry):
        if partition_of(parts[0]) is None:
            continue
        changes[field_name] = tuple(
            p for p in parts if (partition_of(p) == partition) == keep_matching
        )
    if not changes or not any(changes.values()):
        return None
    return dataclasses.replace(entry, **changes)
