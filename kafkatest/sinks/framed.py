"""Decode Confluent-framed keys and values (magic 0, schema id, payload) through a registry.

The schema comes from the registry by the id in each record, as a consumer's
deserializer gets it, so records written with several schema versions all decode. A
record that does not decode (a poison pill: another magic byte, an unknown id, a
truncated body) is kept as its raw bytes, as undecodable JSON is kept as text: a sink
assertion should show it, not fail the read.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from typing import Any

FRAMED = ("avro", "protobuf", "json-schema")

log = logging.getLogger("kafkatest.sinks")


def framed_decoder(
    fmt: str, registry: Any, topic: str, *, is_key: bool = False
) -> Callable[[bytes | None], Any]:
    """A decoder for one topic's keys or values in `fmt` ("avro", "protobuf", "json-schema")."""
    from kafkatest._ground.lean_imports import import_schema_registry_client

    import_schema_registry_client()
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.serialization import MessageField, SerializationContext

    from kafkatest.seeding.wire import registry_url

    if registry is None:
        raise ValueError(f"decoding {fmt!r} needs schema_registry= (a URL or the fixture)")
    client = SchemaRegistryClient({"url": registry_url(registry)})
    context = SerializationContext(topic, MessageField.KEY if is_key else MessageField.VALUE)
    inner: Callable[[bytes], Any]
    if fmt == "avro":
        from confluent_kafka.schema_registry.avro import AvroDeserializer

        avro = AvroDeserializer(client)
        inner = lambda data: avro(data, context)  # noqa: E731
    elif fmt == "json-schema":
        from confluent_kafka.schema_registry.json_schema import JSONDeserializer

        json_schema = JSONDeserializer(None, schema_registry_client=client)
        inner = lambda data: json_schema(data, context)  # noqa: E731
    elif fmt == "protobuf":
        inner = _ProtobufDecoder(client, context)
    else:
        raise ValueError(f"decode as one of {FRAMED}, not {fmt!r}")

    def decode(data: bytes | None) -> Any:
        if data is None:
            return None
        try:
            return inner(data)
        except Exception as exc:
            log.info("%s: a record does not decode as %s (%s); kept as bytes", topic, fmt, exc)
            return data

    return decode


class _ProtobufDecoder:
    """Protobuf without the generated class: the class is built from the registered
    descriptor (confluent-kafka registers a base64 ``FileDescriptorProto``)."""

    def __init__(self, client: Any, context: Any) -> None:
        self.client = client
        self.context = context
        self.classes: dict[int, Any] = {}

    def __call__(self, data: bytes) -> Any:
        from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
        from google.protobuf import json_format

        if len(data) < 5 or data[0] != 0:
            raise ValueError("not Confluent-framed")
        schema_id = int.from_bytes(data[1:5], "big")
        if schema_id not in self.classes:
            self.classes[schema_id] = self._message_class(schema_id)
        deserializer = ProtobufDeserializer(
            self.classes[schema_id], {"use.deprecated.format": False}
        )
        message = deserializer(data, self.context)
        # Every field, defaults included, as a consumer reading the message would see it.
        try:
            return json_format.MessageToDict(
                message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
            )
        except TypeError:  # protobuf < 5.26 names it differently
            return json_format.MessageToDict(
                message, preserving_proto_field_name=True, including_default_value_fields=True
            )

    def _message_class(self, schema_id: int) -> Any:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

        schema = self.client.get_schema(schema_id, fmt="serialized")
        pool = descriptor_pool.DescriptorPool()
        for ref in schema.references or ():
            referenced = self.client.get_version(ref.subject, ref.version, fmt="serialized")
            pool.Add(
                descriptor_pb2.FileDescriptorProto.FromString(
                    base64.b64decode(referenced.schema.schema_str)
                )
            )
        file = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(schema.schema_str))
        pool.Add(file)
        name = (
            f"{file.package}.{file.message_type[0].name}"
            if file.package
            else file.message_type[0].name
        )
        return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
