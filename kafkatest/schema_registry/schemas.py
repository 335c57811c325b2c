"""Schema texts by type: validation, the canonical text stored, and Avro parsing with references.

The registry keeps each schema's text once per (type, canonical text, references), which
is what makes the same schema get the same id under every subject, as Confluent's does.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafkatest.schema_registry import errors

SCHEMA_TYPES = ("AVRO", "PROTOBUF", "JSON")
#: How much of a refused schema its error message quotes (bodies may be megabytes).
QUOTED_CHARS = 500


def _quoted(text: str) -> str:
    return repr(text if len(text) <= QUOTED_CHARS else text[:QUOTED_CHARS] + "...")


@dataclass(frozen=True)
class Reference:
    """A schema this one imports: `name` is how the schema text refers to it."""

    name: str
    subject: str
    version: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "subject": self.subject, "version": self.version}


@dataclass(frozen=True)
class Schema:
    schema_type: str
    text: str
    references: tuple[Reference, ...] = field(default=())

    def identity(self) -> tuple[str, str, tuple[Reference, ...]]:
        return (self.schema_type, self.text, self.references)


#: Looks up (subject, version) for references: -> the referenced Schema.
ResolveReference = Callable[[Reference], Schema]


def canonical(
    schema_type: str, text: str, references: tuple[Reference, ...], resolve: ResolveReference
) -> str:
    """The text to store, after checking that `text` is a valid schema of `schema_type`."""
    if schema_type == "AVRO":
        parse_avro(text, references, resolve)
        return json.dumps(_avro_plain(json.loads(text)), separators=(",", ":"))
    if schema_type == "JSON":
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise errors.invalid_schema(f"{_quoted(text)}, details: {exc}") from None
        import jsonschema  # only JSON Schema users need it installed

        try:
            jsonschema.validators.validator_for(document).check_schema(document)
        except jsonschema.SchemaError as exc:
            raise errors.invalid_schema(
                f"{_quoted(text)}, details: {exc.message[:QUOTED_CHARS]}"
            ) from None
        return json.dumps(document, separators=(",", ":"))
    _check_protobuf(text)
    return text


PRIMITIVES = frozenset(("null", "boolean", "int", "long", "float", "double", "bytes", "string"))


def _avro_plain(node: Any) -> Any:
    """Avro's own printing (Java's ``Schema.toString``): ``{"type": "string"}`` is ``"string"``."""
    if isinstance(node, list):
        return [_avro_plain(n) for n in node]
    if isinstance(node, dict):
        if set(node) == {"type"} and node["type"] in PRIMITIVES:
            return node["type"]
        return {
            k: _avro_plain(v) if k in ("type", "items", "values", "fields") else v
            for k, v in node.items()
        }
    return node


def _check_protobuf(text: str) -> None:
    """Either a base64 ``FileDescriptorProto`` (what confluent-kafka sends) or .proto text."""
    if "syntax" in text or "message " in text or "enum " in text:
        return
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise errors.invalid_schema(
            f"{_quoted(text)}, details: neither .proto text nor a base64 FileDescriptorProto"
        ) from None
    from google.protobuf import descriptor_pb2

    try:
        descriptor_pb2.FileDescriptorProto.FromString(raw)
    except Exception as exc:
        raise errors.invalid_schema(
            f"{_quoted(text)}, details: not a FileDescriptorProto: {exc}"
        ) from None


def parse_avro(
    text: str, references: tuple[Reference, ...], resolve: ResolveReference
) -> tuple[Any, dict[str, Any]]:
    """(parsed schema, its table of named types), the references' named types included."""
    import fastavro

    names: dict[str, Any] = {}
    seen: set[tuple[str, int]] = set()

    def load(refs: tuple[Reference, ...]) -> None:
        for ref in refs:
            if (ref.subject, ref.version) in seen:
                continue
            seen.add((ref.subject, ref.version))
            target = resolve(ref)
            load(target.references)
            fastavro.parse_schema(json.loads(target.text), named_schemas=names)

    load(references)
    try:
        document = json.loads(text)
        parsed = fastavro.parse_schema(document, named_schemas=names)
    except json.JSONDecodeError as exc:
        raise errors.invalid_schema(f"{_quoted(text)}, details: not JSON: {exc}") from None
    except Exception as exc:  # fastavro raises several kinds for a bad schema
        raise errors.invalid_schema(
            f"{_quoted(text)}, details: {type(exc).__name__}: {str(exc)[:QUOTED_CHARS]}"
        ) from None
    return parsed, names
