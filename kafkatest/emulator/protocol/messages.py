"""API message bodies, decoded and encoded with kio's generated entities.

kio's native reader is fast but raises on tagged fields it does not know, which a
newer client may legitimately send. Decoding therefore tries the native reader
first and, only on that failure, re-reads with a slower reader built here from the
same kio dataclasses that skips unknown tags by their length, as Kafka does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import cache
from typing import Any

from kio._kio_native import compact_array_reader, get_field_reader, legacy_array_reader
from kio.index import KioIndexError, load_request_schema, load_response_schema
from kio.serial import entity_reader
from kio.serial._introspect import (
    EntityField,
    EntityTupleField,
    classify_field,
    get_field_tag,
    is_optional,
)
from kio.static.protocol import Entity, RequestPayload, ResponsePayload

from kafkatest.emulator.protocol.guard import checked_frame
from kafkatest.emulator.protocol.primitives import DecodeError, read_uvarint
from kafkatest.emulator.protocol.replies import ScatterWriter, write_entity

#: kio's reader shape: (buffer, offset) -> (value, bytes consumed).
Reader = Callable[[Any, int], tuple[Any, int]]


@cache
def request_schema(api_key: int, version: int) -> type[RequestPayload] | None:
    """kio's request entity for (api_key, version), or None if kio lacks it."""
    try:
        return load_request_schema(api_key, version)
    except KioIndexError:
        return None


@cache
def response_schema(api_key: int, version: int) -> type[ResponsePayload] | None:
    try:
        return load_response_schema(api_key, version)
    except KioIndexError:
        return None


def load_schemas(api_key: int, version: int) -> None:
    """Load (api_key, version)'s request and response entities and the request's reader
    now, not when the first such request arrives.

    kio builds each entity class as its module loads (dataclass methods compiled from
    source): 5-15 ms per API version, paid by the client that sends it first, which
    waits meanwhile. Loaded while the broker idles, the request is answered at once.
    """
    schema = request_schema(api_key, version)
    response_schema(api_key, version)
    if schema is not None:
        entity_reader(schema)


def is_flexible_request(api_key: int, version: int) -> bool:
    """Whether (api_key, version) uses header v2 and compact encodings."""
    schema = request_schema(api_key, version)
    return bool(schema is not None and schema.__flexible__)


def decode_request(schema: type[RequestPayload], frame: bytes, offset: int) -> Any:
    """Decode the request body starting at `offset`.

    `guard.checked_frame` runs first: kio's readers size allocations by the counts
    they read, so no count reaches them before it is checked against the frame, and
    encodings Kafka reads differently from kio are rewritten to what Kafka reads.
    """
    frame = checked_frame(schema, frame, offset)
    try:
        entity, _ = entity_reader(schema)(frame, offset)
        return entity
    except KeyError as exc:
        if "tagged field" not in str(exc):
            raise DecodeError(f"cannot decode {schema.__name__}: {exc}") from exc
    except Exception as exc:
        raise DecodeError(f"cannot decode {schema.__name__}: {exc}") from exc
    try:
        entity, _ = _tolerant_reader(schema)(frame, offset)
    except Exception as exc:
        raise DecodeError(f"cannot decode {schema.__name__}: {exc}") from exc
    return entity


def encode_response(response: Any) -> bytes:
    """Encode a kio response entity's body (no header) as one byte string (a Fetch
    response's `StoredRecords` included; the server sends `replies.encode_reply`)."""
    writer = ScatterWriter()
    write_entity(writer, response)
    return b"".join(writer.parts())


def encode_entity(entity: Any) -> bytes:
    """Encode any kio entity, e.g. a nested struct written into a bytes field."""
    return encode_response(entity)


@cache
def _tolerant_reader(entity_type: type[Entity]) -> Reader:
    """A reader for `entity_type` that skips unknown tagged fields by size."""
    flexible = bool(entity_type.__flexible__)
    regular: list[tuple[str, Reader]] = []
    tagged: dict[int, tuple[str, Reader]] = {}
    for field in dataclasses.fields(entity_type):
        tag = get_field_tag(field)
        reader = _field_reader(entity_type, field, tag is not None)
        if tag is None:
            regular.append((field.name, reader))
        else:
            tagged[tag] = (field.name, reader)

    def read(buffer: Any, start: int) -> tuple[Any, int]:
        values: dict[str, Any] = {}
        offset = start
        for name, reader in regular:
            values[name], size = reader(buffer, offset)
            offset += size
        if flexible:
            count, offset = read_uvarint(buffer, offset)
            for _ in range(count):
                tag, offset = read_uvarint(buffer, offset)
                size, offset = read_uvarint(buffer, offset)
                if tag in tagged:
                    name, reader = tagged[tag]
                    values[name], _ = reader(buffer, offset)
                offset += size
        return entity_type(**values), offset - start

    return read


def _field_reader(entity_type: type[Entity], field: dataclasses.Field, is_tag: bool) -> Reader:
    kind = classify_field(field)
    if isinstance(kind, EntityField):
        inner = _tolerant_reader(kind.type_)
        return _nullable_struct(inner) if (not is_tag and is_optional(field)) else inner
    if isinstance(kind, EntityTupleField):
        inner = _tolerant_reader(kind.type_)
        if entity_type.__flexible__:
            return compact_array_reader(inner)
        return legacy_array_reader(inner)
    return get_field_reader(entity_type, field, False, is_tag)


def _nullable_struct(inner: Reader) -> Reader:
    def read(buffer: Any, offset: int) -> tuple[Any, int]:
        marker = buffer[offset]
        if marker == 0xFF:
            return None, 1
        value, size = inner(buffer, offset + 1)
        return value, size + 1

    return read
