"""A schema that changes while the job runs. The job decodes Confluent-framed Avro two
ways: Spark's from_avro with the reader schema it was started with (the subject's
latest version then), and confluent-kafka's AvroDeserializer with that same reader
schema, which looks up each record's writer schema by its id. A new version of the
subject is registered while the query runs and records are written with it; then the
query restarts, picks up the new version, and meets a record a producer still writes
with the old one. For each kind of change, what each decoder does.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("fastavro", reason="pip install 'kafkatest[schemas]'")

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from kafkatest.seeding import seed
from kafkatest.sinks import BatchCapture

pytestmark = pytest.mark.spark


def order_schema(*fields: dict[str, Any]) -> str:
    return json.dumps({"type": "record", "name": "Order", "fields": list(fields)})


ID = {"name": "order_id", "type": "string"}
QTY = {"name": "qty", "type": "long"}
V1 = order_schema(ID, QTY)
#: Each change: the compatibility level it is registered under, its v2, and a v2 record.
CHANGES = {
    # BACKWARD and FORWARD: a field appended with a default.
    "full: a field added with a default": (
        "FULL",
        order_schema(ID, QTY, {"name": "note", "type": "string", "default": ""}),
        {"order_id": "v2", "qty": 2, "note": "gift"},
    ),
    # BACKWARD only: v2 reads v1's records (it ignores qty); v1 cannot read v2's.
    "backward: a field removed": ("BACKWARD", order_schema(ID), {"order_id": "v2"}),
    # FORWARD only: v1 reads v2's records (it ignores note); v2 cannot read v1's.
    "forward: a field added without a default": (
        "FORWARD",
        order_schema(ID, QTY, {"name": "note", "type": "string"}),
        {"order_id": "v2", "qty": 2, "note": "gift"},
    ),
    # Neither: a field's type changed (long to string), registered with the check off.
    "incompatible: a field's type changed": (
        "NONE",
        order_schema(ID, {"name": "qty", "type": "string"}),
        {"order_id": "v2", "qty": "2"},
    ),
}


def start(spark: Any, bootstrap: str, topic: str, registry_url: str, capture: Any, checkpoint: str):
    """The job: the subject's latest version is its reader schema, taken when it starts."""
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro

    reader = SchemaRegistryClient({"url": registry_url}).get_latest_version(f"{topic}-value")
    reader_schema = reader.schema.schema_str

    def confluent(value):  # no type hints: PySpark would read them as a pandas UDF's
        """confluent-kafka's deserializer: the writer schema by the record's id, resolved
        to the job's reader schema; its error's name when it refuses."""
        from kafkatest._ground.lean_imports import import_schema_registry_client

        import_schema_registry_client()  # without the warning authlib prints on import
        from confluent_kafka.schema_registry import SchemaRegistryClient as Client
        from confluent_kafka.schema_registry.avro import AvroDeserializer
        from confluent_kafka.serialization import MessageField, SerializationContext

        client = Client({"url": registry_url})
        context = SerializationContext(topic, MessageField.VALUE)
        try:
            return json.dumps(AvroDeserializer(client, reader_schema)(bytes(value), context))
        except Exception as error:  # what a job calling it would raise, by name
            return type(error).__name__

    raw = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
    )
    decoded = raw.select(
        F.col("key").cast("string").alias("record"),
        F.lit(reader.version).alias("reader"),
        from_avro(
            F.expr("substring(value, 6, length(value) - 5)"), reader_schema, {"mode": "PERMISSIVE"}
        ).alias("from_avro"),
        F.udf(confluent, "string")("value").alias("confluent"),
    )
    return (
        decoded.writeStream.foreachBatch(capture).option("checkpointLocation", checkpoint).start()
    )


def outcome(row: dict[str, Any]) -> tuple[Any, Any]:
    """What each decoder gave for a record: the fields it read (None where from_avro
    failed and PERMISSIVE left nulls), or the deserializer's error."""
    fields = row["from_avro"]
    from_avro = None if all(v is None for v in fields.values()) else fields
    confluent = row["confluent"]
    return from_avro, json.loads(confluent) if confluent.startswith("{") else confluent


# --8<-- [start:outcomes]
V1_ORDER = {"order_id": "v1", "qty": 1}
#: What each decoder gave, by (record, the reader version the job ran with): the job
#: runs with v1 when the v2 record arrives, then restarts with v2 and reads a v1 record
#: and a v2 one. Measured on both brokers (docs/how-to/state.md#schemas-that-change).
EXPECTED = {
    "full: a field added with a default": {
        # Both read v2's record with v1: note is dropped.
        ("v2 record", 1): ({"order_id": "v2", "qty": 2}, {"order_id": "v2", "qty": 2}),
        # Restarted with v2: from_avro reads v1's bytes as v2 and fails (PERMISSIVE: nulls);
        # the deserializer resolves them, the default filling note.
        ("v1 record", 2): (None, {"order_id": "v1", "qty": 1, "note": ""}),
        ("v2 record", 2): (
            {"order_id": "v2", "qty": 2, "note": "gift"},
            {"order_id": "v2", "qty": 2, "note": "gift"},
        ),
    },
    "backward: a field removed": {
        # The running job (v1) cannot read v2's record: qty is missing, with no default.
        ("v2 record", 1): (None, "SchemaResolutionError"),
        # Upgraded consumers read both: what BACKWARD promises.
        ("v1 record", 2): ({"order_id": "v1"}, {"order_id": "v1"}),
        ("v2 record", 2): ({"order_id": "v2"}, {"order_id": "v2"}),
    },
    "forward: a field added without a default": {
        # The running job (v1) reads v2's record: what FORWARD promises.
        ("v2 record", 1): ({"order_id": "v2", "qty": 2}, {"order_id": "v2", "qty": 2}),
        # Restarted with v2, it cannot read a record still written with v1.
        ("v1 record", 2): (None, "SchemaResolutionError"),
        ("v2 record", 2): (
            {"order_id": "v2", "qty": 2, "note": "gift"},
            {"order_id": "v2", "qty": 2, "note": "gift"},
        ),
    },
    "incompatible: a field's type changed": {
        # from_avro reads the string "2" as the long 1 (its length byte), with no error:
        # silently wrong. The deserializer refuses it.
        ("v2 record", 1): ({"order_id": "v2", "qty": 1}, "SchemaResolutionError"),
        ("v1 record", 2): (None, "SchemaResolutionError"),
        ("v2 record", 2): ({"order_id": "v2", "qty": "2"}, {"order_id": "v2", "qty": "2"}),
    },
}
# --8<-- [end:outcomes]


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_schema_changes_while_the_job_runs(
    change: str,
    spark: Any,
    kafka_broker: Any,
    kafka_topic: Any,
    schema_registry: Any,
    tmp_path: Any,
) -> None:
    level, v2, v2_record = CHANGES[change]
    topic = kafka_topic(partitions=1)
    client = SchemaRegistryClient({"url": schema_registry.url})

    def write(record: str, value: dict[str, Any], schema: str) -> None:
        seed(
            kafka_broker,
            topic,
            [{"key": record, "value": value}],
            value_format="avro",
            schema=schema,
            schema_registry=schema_registry,
        )

    write("v1 record", {"order_id": "v1", "qty": 1}, V1)
    capture = BatchCapture()
    checkpoint = str(tmp_path / "checkpoint")
    query = start(
        spark, kafka_broker.bootstrap_servers, topic, schema_registry.url, capture, checkpoint
    )
    try:
        query.processAllAvailable()
        # The subject moves to v2 while the query runs, and producers write with it.
        if level in ("FORWARD", "NONE"):  # the default level, BACKWARD, refuses them
            with pytest.raises(SchemaRegistryError, match="incompatible with an earlier"):
                client.register_schema(f"{topic}-value", Schema(v2, "AVRO"))
        client.set_compatibility(f"{topic}-value", level)
        client.register_schema(f"{topic}-value", Schema(v2, "AVRO"))
        write("v2 record", v2_record, v2)
        query.processAllAvailable()
    finally:
        query.stop()
    # Restarted: the job now reads with v2, and a producer still writes with v1.
    write("v1 record", {"order_id": "v1", "qty": 1}, V1)
    write("v2 record", v2_record, v2)
    query = start(
        spark, kafka_broker.bootstrap_servers, topic, schema_registry.url, capture, checkpoint
    )
    try:
        query.processAllAvailable()
    finally:
        query.stop()

    seen = {(r["record"], r["reader"]): outcome(r) for r in capture.rows}
    assert seen == {("v1 record", 1): (V1_ORDER, V1_ORDER), **EXPECTED[change]}
