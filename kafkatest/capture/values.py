"""Keys, values and headers as a capture stores them, decoding Confluent's Avro and JSON
Schema framing with the schema fetched once from the registry (and written into the
file); Protobuf is kept as bytes, with its schema."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import struct
from collections.abc import Callable
from typing import Any

from kafkatest.seeding.capture_file import encode_bytes

#: A schema line for the file, written before the first record that uses the schema.
SchemaSink = Callable[[dict[str, Any]], None]


class ValueDecoder:
    """Bytes as a capture entry; Avro through `registry_url` when the bytes are framed."""

    def __init__(self, registry: Any, on_schema: SchemaSink) -> None:
        """`registry`: a confluent-kafka SchemaRegistryClient, or None (no Avro decoding)."""
        self.registry = registry
        self.on_schema = on_schema
        self._parsed: dict[int, Any] = {}

    def decode(self, data: bytes | None, topic: str, field: str) -> dict[str, Any] | None:
        if data is None:
            return None
        if len(data) > 5 and data[0] == 0:  # Confluent's framing: magic byte, schema id
            schema_id = struct.unpack(">I", data[1:5])[0]
            schema = self._schema(schema_id, topic, field) if self.registry is not None else None
            if schema is not None:
                schema_type, parsed = schema
                if schema_type == "AVRO":
                    from fastavro import schemaless_reader

                    value = schemaless_reader(io.BytesIO(data[5:]), parsed, None)
                    return {"avro": value, "schema_id": schema_id}
                if schema_type == "JSON":
                    with contextlib.suppress(ValueError):
                        return {"json": json.loads(data[5:]), "schema_id": schema_id}
                # Protobuf (not decoded here): kept whole, its schema in the file.
                return {"base64": base64.b64encode(data).decode("ascii"), "schema_id": schema_id}
            # Framed, but not decoded: bytes, never text an anonymization rule would
            # look into and find nothing.
            return {"base64": base64.b64encode(data).decode("ascii")}
        return encode_bytes(data)

    def _schema(self, schema_id: int, topic: str, field: str) -> tuple[str, Any] | None:
        """(schema type, parsed Avro schema or None) of a registry id; None if unknown."""
        if schema_id not in self._parsed:
            self._parsed[schema_id] = self._fetch(schema_id, topic, field)
        return self._parsed[schema_id]

    def _fetch(self, schema_id: int, topic: str, field: str) -> Any:
        from fastavro import parse_schema

        try:
            schema = self.registry.get_schema(schema_id)
        except Exception:
            return None  # not a registry id after all: the bytes are kept as they are
        schema_type = schema.schema_type or "AVRO"
        self.on_schema(
            {
                "schema_id": schema_id,
                "schema_type": schema_type,
                "subject": f"{topic}-{field}",
                "schema": schema.schema_str,
            }
        )
        if schema_type != "AVRO":
            return (schema_type, None)
        return (schema_type, parse_schema(json.loads(schema.schema_str)))


#: The entry forms that hold decoded data (what anonymization rules can look into).
DECODED_FORMS = ("json", "avro", "text")


def is_decoded(encoded: dict[str, Any] | None) -> bool:
    """Whether an entry holds decoded data (JSON, Avro, text) the rules can look into."""
    return encoded is not None and any(form in encoded for form in DECODED_FORMS)


def value_of(encoded: dict[str, Any] | None) -> Any:
    """The decoded data inside an entry (what anonymization and the field review see)."""
    if encoded is None:
        return None
    return next((encoded[form] for form in DECODED_FORMS if form in encoded), None)


def with_value(encoded: dict[str, Any] | None, data: Any) -> dict[str, Any] | None:
    """`encoded` with its decoded data replaced (the form and schema id kept)."""
    if encoded is None:
        return None
    for form in DECODED_FORMS:
        if form in encoded:
            return {**encoded, form: data}
    return encoded if data is not None else None
