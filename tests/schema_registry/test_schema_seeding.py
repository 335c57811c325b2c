"""seed() writes Avro, Protobuf and JSON Schema records in Confluent's wire format, and
topic_rows() reads them back through the registry so the delivery assertions work unchanged."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("fastavro", reason="pip install 'kafkatest[schemas]'")

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext
from test_serializers import order_class

from kafkatest.assertions import assert_at_least_once, assert_exactly_once
from kafkatest.brokers.base import Broker
from kafkatest.schema_registry import SchemaRegistryServer
from kafkatest.seeding import fake_values, seed
from kafkatest.sinks import topic_rows

ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "order_id", "type": "string"},
        {"name": "qty", "type": "int"},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
        {"name": "note", "type": ["null", "string"], "default": None},
    ],
}


def test_avro_values_and_keys(
    kafka_broker: Broker, kafka_topic: Any, schema_registry: SchemaRegistryServer
) -> None:
    topic = kafka_topic(partitions=2)
    orders = fake_values(ORDER, 20, seed=3)
    seeded = seed(
        kafka_broker,
        topic,
        orders,
        key_field="order_id",
        value_format="avro",
        schema=ORDER,
        key_format="avro",
        key_schema='"string"',
        schema_registry=schema_registry,
    )
    client = SchemaRegistryClient({"url": schema_registry.url})
    value_id = client.get_latest_version(f"{topic}-value").schema_id
    assert client.get_latest_version(f"{topic}-key").schema.schema_str == '"string"'
    for record in seeded.records:
        assert record.value is not None and record.value[:1] == b"\x00"
        assert int.from_bytes(record.value[1:5], "big") == value_id
    # What a consumer's own AvroDeserializer sees is the seeded value.
    first = AvroDeserializer(client)(
        seeded.records[0].value, SerializationContext(topic, MessageField.VALUE)
    )
    assert first == orders[0]
    rows = topic_rows(
        kafka_broker, topic, key="avro", value="avro", schema_registry=schema_registry
    )
    assert sorted(r["value"]["order_id"] for r in rows) == sorted(o["order_id"] for o in orders)
    assert all(r["key"] == r["value"]["order_id"] for r in rows)
    assert_exactly_once(seeded, rows)


def test_protobuf_and_json_schema(
    kafka_broker: Broker, kafka_topic: Any, schema_registry: SchemaRegistryServer
) -> None:
    proto_topic = kafka_topic()
    seeded = seed(
        kafka_broker,
        proto_topic,
        [{"id": i, "item": f"i{i}"} for i in range(5)],
        value_format="protobuf",
        schema=order_class(),
        schema_registry=schema_registry.url,
    )
    rows = topic_rows(kafka_broker, proto_topic, value="protobuf", schema_registry=schema_registry)
    # Proto3 JSON mapping: int64 travels as text; the decoder needs no generated class.
    assert [r["value"] for r in rows] == [{"id": str(i), "item": f"i{i}"} for i in range(5)]
    assert_at_least_once(seeded, rows)

    json_topic = kafka_topic()
    schema = {
        "type": "object",
        "properties": {"id": {"type": "integer"}},
        "required": ["id"],
    }
    seeded = seed(
        kafka_broker,
        json_topic,
        [{"id": i} for i in range(4)],
        value_format="json-schema",
        schema=schema,
        schema_registry=schema_registry,
    )
    assert seeded.records[0].value is not None and seeded.records[0].value[:1] == b"\x00"
    rows = topic_rows(
        kafka_broker, json_topic, value="json-schema", schema_registry=schema_registry
    )
    assert [r["value"] for r in rows] == [{"id": i} for i in range(4)]


def test_refused_schema_gets_the_registry_error(
    kafka_broker: Broker, kafka_topic: Any, schema_registry: SchemaRegistryServer
) -> None:
    topic = kafka_topic()
    seed(
        kafka_broker,
        topic,
        [{"a": 1}],
        value_format="avro",
        schema=_record({"name": "a", "type": "int"}),
        schema_registry=schema_registry,
    )
    v2 = _record({"name": "a", "type": "int"}, {"name": "b", "type": "string"})
    with pytest.raises(SchemaRegistryError) as refused:
        seed(
            kafka_broker,
            topic,
            [{"a": 2, "b": "x"}],
            value_format="avro",
            schema=v2,
            schema_registry=schema_registry,
            id_prefix="v2-",
        )
    assert refused.value.error_code == 409
    with pytest.raises(SchemaRegistryError) as malformed:
        seed(
            kafka_broker,
            topic,
            [{"a": 2}],
            value_format="avro",
            schema='{"type": "recrd"}',
            schema_registry=schema_registry,
            id_prefix="bad-",
        )
    assert malformed.value.error_code == 42201
    assert len(topic_rows(kafka_broker, topic, value="bytes")) == 1


def test_bad_arguments_say_what_is_missing(kafka_broker: Broker, kafka_topic: Any) -> None:
    topic = kafka_topic()
    with pytest.raises(ValueError, match="needs schema="):
        seed(kafka_broker, topic, [{"a": 1}], value_format="avro")
    with pytest.raises(ValueError, match="needs schema_registry="):
        seed(kafka_broker, topic, [{"a": 1}], value_format="avro", schema=ORDER)
    with pytest.raises(ValueError, match="is not one of"):
        seed(kafka_broker, topic, [{"a": 1}], value_format="xml")


def test_fake_values_fit_the_avro_schema() -> None:
    import fastavro

    values = fake_values(json.dumps(ORDER), 50, seed=9)
    assert values == fake_values(ORDER, 50, seed=9)  # same seed, same records
    parsed = fastavro.parse_schema(ORDER)
    assert all(fastavro.validation.validate(v, parsed) for v in values)
    assert {v["status"] for v in values} == {"NEW", "PAID"}


def _record(*fields: dict[str, Any]) -> str:
    return json.dumps({"type": "record", "name": "R", "fields": list(fields)})
