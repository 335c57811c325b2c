"""Seeded values in Confluent's wire format: Avro, Protobuf or JSON Schema via a registry.

The encoders are confluent-kafka's own serializers with TopicNameStrategy (subject
``<topic>-value`` / ``<topic>-key``), so what a test seeds is byte for byte what a
producer using them writes, and the schema is registered (or refused with the
registry's error) the way that producer's would be.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kafkatest.seeding.items import Encoder

FORMATS = ("json", "avro", "protobuf", "json-schema")


def registry_url(registry: Any) -> str:
    """A URL from a URL, a `SchemaRegistryServer` (its ``.url``) or a client config dict."""
    if isinstance(registry, str):
        return registry
    if isinstance(registry, Mapping) and isinstance(registry.get("url"), str):
        return str(registry["url"])
    url = getattr(registry, "url", None)
    if isinstance(url, str):
        return url
    raise ValueError(
        f"schema_registry={registry!r}: pass the registry's URL or the schema_registry fixture"
    )


def framed_encoder(
    fmt: str, schema: Any, registry: Any, topic: str, *, is_key: bool = False
) -> Encoder | None:
    """The encoder for `fmt` (None for plain JSON, which seeding already writes)."""
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    if fmt == "json":
        if schema is not None:
            raise ValueError("a schema needs a format: avro, protobuf or json-schema")
        return None
    what = "key_schema" if is_key else "schema"
    if schema is None:
        raise ValueError(f"format {fmt!r} needs {what}= (the schema the records are written with)")
    if registry is None:
        raise ValueError(
            f"format {fmt!r} needs schema_registry= (a URL, or the schema_registry fixture)"
        )
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.serialization import MessageField, SerializationContext

    client = SchemaRegistryClient({"url": registry_url(registry)})
    context = SerializationContext(topic, MessageField.KEY if is_key else MessageField.VALUE)
    serialize: Callable[[Any, Any], bytes | None]
    if fmt in ("avro", "json-schema"):
        from confluent_kafka.schema_registry import Schema

        text = schema if isinstance(schema, str) else _json(schema)
        # Registered first, so a refused schema gets the registry's own error code and
        # message (the serializer would fail on its own parse before asking).
        subject = f"{topic}-{'key' if is_key else 'value'}"
        client.register_schema(subject, Schema(text, "AVRO" if fmt == "avro" else "JSON"))
    if fmt == "avro":
        from confluent_kafka.schema_registry.avro import AvroSerializer

        serialize = AvroSerializer(client, text)
    elif fmt == "json-schema":
        from confluent_kafka.schema_registry.json_schema import JSONSerializer

        serialize = JSONSerializer(text, client)
    else:
        serialize = _protobuf(schema, client)
    return lambda value: None if value is None else serialize(value, context)


def _protobuf(message_class: Any, client: Any) -> Callable[[Any, Any], bytes | None]:
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from google.protobuf import json_format

    if not hasattr(message_class, "DESCRIPTOR"):
        raise ValueError(
            f"format 'protobuf' needs schema= a generated message class, not {message_class!r}"
        )
    serializer = ProtobufSerializer(message_class, client, {"use.deprecated.format": False})

    def serialize(value: Any, context: Any) -> bytes | None:
        message = value
        if isinstance(value, Mapping):
            message = json_format.ParseDict(dict(value), message_class())
        return serializer(message, context)

    return serialize


def _json(schema: Any) -> str:
    import json

    return json.dumps(schema)
