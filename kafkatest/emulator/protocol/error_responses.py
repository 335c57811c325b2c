"""An error answer to any request, shaped like the real answer would be.

The emulator's handlers each build their own responses; an injected error must
work for every API without a hand-written builder per API. Responses mirror
their requests (a topic entry per requested topic, a partition entry per
requested partition), so the answer is built from the kio response schema by
walking the request, putting the chosen error at the deepest level that carries
one (per partition for Produce and Fetch, per topic for Metadata, top level for
group APIs) and neutral values everywhere else.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import types
import typing
import uuid
from types import ModuleType
from typing import Any, Protocol

from kio.index import load_payload_module
from kio.schema.errors import ErrorCode
from kio.static.constants import EntityType

from kafkatest.emulator.protocol.request_scope import (
    PARTITION_FIELDS,
    TOPIC_FIELDS,
    entity_tuples,
    partition_of,
)

_IDENTITY = (
    *TOPIC_FIELDS,
    "topic_name",
    "topic_id",
    *PARTITION_FIELDS,
    "key",
    "group_id",
    "resource_type",
    "resource_name",
    "transactional_id",
    "user",
    "partition_id",
    "entity_type",
    "entity_name",
)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


class RequestVersion(Protocol):
    """Which API and version a request is (the server's `RequestContext` is one)."""

    @property
    def api_key(self) -> int: ...
    @property
    def api_version(self) -> int: ...


@functools.cache
def _response_module(api_key: int, version: int) -> ModuleType:
    return load_payload_module(api_key, version, EntityType.response)


def error_response(ctx: RequestVersion, request: Any, code: ErrorCode) -> Any:
    """The response to `request` reporting `code` for everything it asked about."""
    module = _response_module(ctx.api_key, ctx.api_version)
    top = next(
        value
        for value in vars(module).values()
        if isinstance(value, type) and getattr(value, "__type__", None) is EntityType.response
    )
    response, _carries = _build(top, request, code)
    return response


def merge_responses(served: Any, injected: Any) -> Any:
    """One response holding the served topic entries and the injected ones.

    The same topic may be in both (an error aimed at one partition): its
    partition entries are joined.
    """
    changes: dict[str, tuple[Any, ...]] = {}
    for field_name, extra in entity_tuples(injected):
        mine = list(getattr(served, field_name))
        for entry in extra:
            same = next((i for i, m in enumerate(mine) if _same_entity(m, entry)), None)
            if same is None:
                mine.append(entry)
            else:
                mine[same] = _merge_children(mine[same], entry)
        changes[field_name] = tuple(mine)
    return dataclasses.replace(served, **changes)


def _merge_children(served: Any, injected: Any) -> Any:
    changes = {
        name: getattr(served, name) + extra
        for name, extra in entity_tuples(injected)
        if isinstance(getattr(served, name), tuple)
    }
    return dataclasses.replace(served, **changes)


def _same_entity(a: Any, b: Any) -> bool:
    for name in (*TOPIC_FIELDS, "topic_id"):
        value = getattr(a, name, None)
        if value and value == getattr(b, name, None):
            return True
    return False


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _element_type(hint: Any) -> type | None:
    """E for ``tuple[E, ...]`` (or its Optional), else None."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return _element_type(inner[0]) if inner else None
    if typing.get_origin(hint) is tuple and args:
        return args[0]
    return None


def _build(cls: type, source: Any, code: ErrorCode) -> tuple[Any, bool]:
    """Instance of `cls` mirroring `source`; also whether an error code sits below the top."""
    hints = _hints(cls)
    values: dict[str, Any] = {}
    carried_below = False
    mirrored = False
    for f in dataclasses.fields(cls):
        element = _element_type(hints[f.name])
        if element is not None and dataclasses.is_dataclass(element):
            items = () if mirrored else _mirror_items(element, source)
            mirrored = mirrored or bool(items)
            built = [_build(element, item, code) for item in items]
            values[f.name] = tuple(entity for entity, _ in built)
            carried_below = carried_below or any(carries for _, carries in built)
        elif dataclasses.is_dataclass(hints[f.name]):
            values[f.name] = _build(hints[f.name], None, ErrorCode.none)[0]
    for f in dataclasses.fields(cls):
        if f.name in values:
            continue
        if f.metadata.get("kafka_type") == "error_code":
            values[f.name] = ErrorCode.none if carried_below else code
        elif f.name in _IDENTITY and source is not None:
            values[f.name] = _identity(f.name, source, hints[f.name])
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            values[f.name] = _neutral(f, hints[f.name])
    has_code = any(f.metadata.get("kafka_type") == "error_code" for f in dataclasses.fields(cls))
    return cls(**values), carried_below or has_code


def _mirror_items(element: type, source: Any) -> tuple[Any, ...]:
    """The request entries a response tuple of `element` answers one by one."""
    if source is None or not dataclasses.is_dataclass(source):
        return ()
    positional = _POSITIONAL.get(element.__name__)
    if positional is not None:
        return tuple(getattr(source, positional, None) or ())
    kind = _kind({f.name for f in dataclasses.fields(element)})
    if kind == "other":
        return ()
    if kind == "log_dir":
        # DescribeLogDirs answers per log directory, whatever was asked: one carries it.
        return (types.SimpleNamespace(log_dir=""),)
    for _name, items in entity_tuples(source):
        if _kind({f.name for f in dataclasses.fields(items[0])}) == kind:
            return items
    if kind in _REQUEST_FIELDS:
        wanted = set(_REQUEST_FIELDS[kind])
        return tuple(
            _scalar_entry(kind, getattr(item, field))
            for _name, items in entity_tuples(source)
            for item in items
            for field in wanted & {f.name for f in dataclasses.fields(item)}
        )
    for name in _SCALAR_LISTS.get(kind, ()):
        values = getattr(source, name, None)
        if isinstance(values, tuple) and values:
            return tuple(_scalar_entry(kind, value) for value in values)
    # One level down (AlterReplicaLogDirs lists topics under each directory; its
    # answer lists the topics alone).
    return tuple(
        inner
        for _name, items in entity_tuples(source)
        for item in items
        for _inner_name, inner_items in entity_tuples(item)
        if _kind({f.name for f in dataclasses.fields(inner_items[0])}) == kind
        for inner in inner_items
    )


#: Results that answer the request's entries one by one, by position only.
_POSITIONAL = {
    "AclCreationResult": "creations",
    "DeleteAclsFilterResult": "filters",
    # AlterClientQuotas: one result per entry, naming the entry's entity.
    "EntryData": "entries",
    "EntityData": "entity",
}
#: Requests that list plain values where the response has one entry per value.
_SCALAR_LISTS = {
    "topic": ("topic_names",),
    "partition": ("partition_indexes", "partitions"),
    "resource": (),
    "group": ("groups", "groups_names", "group_ids"),
    "key": ("coordinator_keys",),
    "transaction": ("transactional_ids",),
}
_KIND_FIELDS = {
    # AlterReplicaLogDirs' results name a topic "topic_name".
    "topic": (*TOPIC_FIELDS, "topic_id", "topic_name"),
    "partition": (*PARTITION_FIELDS, "partition_id"),
    "resource": ("resource_name",),
    "group": ("group_id",),
    "key": ("key",),
    "transaction": ("transactional_id",),
    "user": ("user",),
    "producer": ("producer_id",),
    "log_dir": ("log_dir",),
}
#: Response kinds whose request entries name them by another field
#: (AlterUserScramCredentials: one result per deletion or upsertion ``name``).
_REQUEST_FIELDS = {"user": ("name",)}


def _kind(names: set[str]) -> str:
    return next((kind for kind, fields in _KIND_FIELDS.items() if names & set(fields)), "other")


def _scalar_entry(kind: str, value: Any) -> types.SimpleNamespace:
    """A stand-in entry for one plain value (``partition_indexes=(0, 1)`` -> two entries)."""
    return types.SimpleNamespace(**dict.fromkeys(_KIND_FIELDS[kind], value))


def _identity(name: str, source: Any, hint: Any) -> Any:
    if name in PARTITION_FIELDS:
        value = partition_of(source)
        return value if value is not None else -1
    if name in TOPIC_FIELDS or name == "topic_name":
        for other in TOPIC_FIELDS:
            value = getattr(source, other, None)
            if isinstance(value, str):
                return value
    value = getattr(source, name, None)
    return value if value is not None else _neutral_for(hint, name)


def _neutral(f: dataclasses.Field[Any], hint: Any) -> Any:
    return _neutral_for(hint, f.metadata.get("kafka_type", ""))


def _neutral_for(hint: Any, kafka_type: str) -> Any:
    """A value that means "nothing here" for a field of this wire type."""
    optional = type(None) in typing.get_args(hint)
    if kafka_type == "records":
        # Kafka sends empty records, never null: librdkafka cannot parse a null set.
        return b""
    if _element_type(hint) is not None:
        return None if optional else ()
    if optional:
        return None
    if kafka_type in ("string", "name", "topic", "key", "group_id"):
        return ""
    if kafka_type in ("bytes", "records"):
        return b""
    if kafka_type == "bool":
        return False
    if kafka_type == "uuid" or kafka_type == "topic_id":
        return uuid.UUID(int=0)
    if kafka_type.startswith("timedelta"):
        return datetime.timedelta(0)
    if kafka_type == "datetime_i64":
        return _EPOCH
    if kafka_type == "float64":
        return 0.0
    if kafka_type == "uint16":
        return 0
    return -1
