"""confluent-kafka's Avro, Protobuf and JSON Schema serdes work against the embedded registry
unchanged, including through a broker on every backend."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

pytest.importorskip("fastavro", reason="pip install 'kafkatest[schemas]'")

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from kafkatest.brokers.base import Broker
from kafkatest.schema_registry import SchemaRegistryServer

ORDER = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "namespace": "shop",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "item", "type": "string"},
            {"name": "note", "type": ["null", "string"], "default": None},
        ],
    }
)


def context(topic: str) -> SerializationContext:
    return SerializationContext(topic, MessageField.VALUE)


def test_avro_round_trip(schema_registry: SchemaRegistryServer) -> None:
    client = SchemaRegistryClient({"url": schema_registry.url})
    topic = f"avro-{uuid.uuid4().hex[:8]}"
    framed = AvroSerializer(client, ORDER)({"id": 7, "item": "tea", "note": None}, context(topic))
    schema_id = client.get_latest_version(f"{topic}-value").schema_id
    # Confluent's wire format: magic byte 0, the big-endian schema id, the Avro body.
    assert framed[0] == 0 and int.from_bytes(framed[1:5], "big") == schema_id
    fresh = SchemaRegistryClient({"url": schema_registry.url})  # no cache: fetches by id
    assert AvroDeserializer(fresh)(framed, context(topic)) == {"id": 7, "item": "tea", "note": None}


def order_class() -> Any:
    """A Protobuf message class built at run time (no protoc): shop.Order {id, item}."""
    name = f"order_{uuid.uuid4().hex[:8]}.proto"
    file = descriptor_pb2.FileDescriptorProto(name=name, package="shop", syntax="proto3")
    message = file.message_type.add(name="Order")
    message.field.add(name="id", number=1, type=3, label=1)  # int64
    message.field.add(name="item", number=2, type=9, label=1)  # string
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Order"))


def test_protobuf_round_trip(schema_registry: SchemaRegistryServer) -> None:
    order = order_class()
    client = SchemaRegistryClient({"url": schema_registry.url})
    topic = f"proto-{uuid.uuid4().hex[:8]}"
    serializer = ProtobufSerializer(order, client, {"use.deprecated.format": False})
    framed = serializer(order(id=3, item="cake"), context(topic))
    assert framed[0] == 0
    registered = client.get_latest_version(f"{topic}-value")
    assert registered.schema.schema_type == "PROTOBUF"
    decoded = ProtobufDeserializer(order, {"use.deprecated.format": False})(framed, context(topic))
    assert (decoded.id, decoded.item) == (3, "cake")


def test_json_schema_round_trip(schema_registry: SchemaRegistryServer) -> None:
    schema = json.dumps(
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "title": "Order",
            "type": "object",
            "properties": {"id": {"type": "integer"}, "item": {"type": "string"}},
            "required": ["id"],
        }
    )
    client = SchemaRegistryClient({"url": schema_registry.url})
    topic = f"json-{uuid.uuid4().hex[:8]}"
    framed = JSONSerializer(schema, client)({"id": 1, "item": "pie"}, context(topic))
    assert client.get_latest_version(f"{topic}-value").schema.schema_type == "JSON"
    fresh = SchemaRegistryClient({"url": schema_registry.url})
    assert JSONDeserializer(None, schema_registry_client=fresh)(framed, context(topic)) == {
        "id": 1,
        "item": "pie",
    }


def test_avro_through_the_broker(
    kafka_broker: Broker, kafka_topic: Any, schema_registry: SchemaRegistryServer
) -> None:
    topic = kafka_topic(partitions=1)
    client = SchemaRegistryClient({"url": schema_registry.url})
    serialize = AvroSerializer(client, ORDER)
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers})
    for i in range(3):
        producer.produce(topic, serialize({"id": i, "item": f"i{i}", "note": None}, context(topic)))
    assert producer.flush(30) == 0
    consumer = Consumer(
        {
            "bootstrap.servers": kafka_broker.bootstrap_servers,
            "group.id": f"g-{topic}",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([topic])
    deserialize = AvroDeserializer(SchemaRegistryClient({"url": schema_registry.url}))
    seen: list[dict[str, Any]] = []
    try:
        for _ in range(300):
            if len(seen) == 3:
                break
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                seen.append(deserialize(message.value(), context(topic)))
    finally:
        consumer.close()
    assert [r["id"] for r in seen] == [0, 1, 2]
