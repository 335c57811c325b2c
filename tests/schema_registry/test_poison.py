"""Faults.poison writes records that a schema-registry deserializer refuses, on every backend."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("fastavro", reason="pip install 'kafkatest[schemas]'")

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext, SerializationError

from kafkatest.brokers.base import Broker
from kafkatest.faults import Faults
from kafkatest.faults.control_actions import checked_params, perform
from kafkatest.faults.poison import KINDS
from kafkatest.faults.validation import InvalidFault
from kafkatest.schema_registry import SchemaRegistryServer
from kafkatest.seeding import seed
from kafkatest.sinks import topic_rows

SCHEMA = '{"type": "record", "name": "R", "fields": [{"name": "n", "type": "long"}]}'


def test_every_kind_is_refused_by_the_deserializer(
    kafka_broker: Broker,
    kafka_topic: Any,
    kafka_faults: Faults,
    schema_registry: SchemaRegistryServer,
) -> None:
    topic = kafka_topic(partitions=2)
    seeded = seed(
        kafka_broker,
        topic,
        [{"n": i} for i in range(4)],
        value_format="avro",
        schema=SCHEMA,
        schema_registry=schema_registry,
    )
    schema_id = int.from_bytes(seeded.records[0].value[1:5], "big")  # type: ignore[index]
    placed = []
    for kind in KINDS:
        placed += kafka_faults.poison(topic, partition=1, payload=kind, schema_id=schema_id)
    assert [p["partition"] for p in placed] == [1] * len(KINDS)
    rows = topic_rows(kafka_broker, topic, value="avro", schema_registry=schema_registry)
    poisoned = [r for r in rows if "kafkatest.poison" in r["headers"]]
    assert [r["headers"]["kafkatest.poison"] for r in poisoned] == list(KINDS)
    # The good records decode; every poison pill stays bytes in the rows...
    assert sorted(r["value"]["n"] for r in rows if r not in poisoned) == [0, 1, 2, 3]
    assert all(isinstance(r["value"], bytes) for r in poisoned)
    # ...because confluent-kafka's own deserializer refuses each of them, each its way:
    # the header checks raise SerializationError, the unknown id the registry's 40403,
    # and fastavro runs off the end of the never-ending varint of the garbage body.
    refusals: dict[str, type[Exception]] = {
        "wrong-magic": SerializationError,
        "unknown-schema-id": SchemaRegistryError,
        "truncated": SerializationError,
        "garbage-body": IndexError,
    }
    deserialize = AvroDeserializer(SchemaRegistryClient({"url": schema_registry.url}))
    context = SerializationContext(topic, MessageField.VALUE)
    for row in poisoned:
        with pytest.raises(refusals[row["headers"]["kafkatest.poison"]]) as refused:
            deserialize(row["value"], context)
        if isinstance(refused.value, SchemaRegistryError):
            assert refused.value.error_code == 40403


def test_bad_poison_requests(kafka_broker: Broker, kafka_topic: Any, kafka_faults: Faults) -> None:
    topic = kafka_topic()
    with pytest.raises(InvalidFault, match="is not one of"):
        kafka_faults.poison(topic, payload="sour")
    with pytest.raises(InvalidFault, match=r"partition\(s\) \[3\] do not exist"):
        kafka_faults.poison(topic, partition=3)
    with pytest.raises(InvalidFault, match="count must be"):
        kafka_faults.poison(topic, count=0)
    # The control interface (HTTP, `kafkatest fault poison`) takes the same action.
    params = checked_params("poison", {"topic": topic, "payload": "truncated", "count": 2})
    assert [p["offset"] for p in perform(kafka_faults, "poison", params)] == [0, 1]
    assert [r["value"] for r in topic_rows(kafka_broker, topic, value="bytes")] == [
        b"\x00\x00\x00"
    ] * 2
