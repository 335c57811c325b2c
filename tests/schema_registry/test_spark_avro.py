"""What Spark's from_avro does with poison pills, in FAILFAST and PERMISSIVE modes.

The job (fixtures/jobs/avro_orders.py) strips the 5-byte Confluent header and decodes the
rest with the schema it was built with, as jobs without a registry-aware decoder do.
Measured on both brokers (the "poison pills" table of docs/how-to/schemas.md):
from_avro never looks at the magic byte or the schema id, so a wrong-magic record and
one with an unknown schema id whose bytes happen to decode become *data*, not errors.
"""

from __future__ import annotations

import json
from typing import Any

import avro_orders as job
import pytest

pytest.importorskip("fastavro", reason="pip install 'kafkatest[schemas]'")

from kafkatest.brokers.base import Broker
from kafkatest.faults import Faults
from kafkatest.faults.poison import KINDS
from kafkatest.schema_registry import SchemaRegistryServer
from kafkatest.seeding import seed
from kafkatest.sinks import BatchCapture
from kafkatest.spark import wait_for_query

pytestmark = pytest.mark.spark

ORDER = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "fields": [{"name": "order_id", "type": "string"}, {"name": "qty", "type": "long"}],
    }
)


def poisoned_topic(
    broker: Broker, kafka_topic: Any, faults: Faults, registry: SchemaRegistryServer
) -> str:
    topic = kafka_topic(partitions=1)
    seed(
        broker,
        topic,
        [{"order_id": f"o-{i}", "qty": i} for i in range(3)],
        value_format="avro",
        schema=ORDER,
        schema_registry=registry,
    )
    for kind in KINDS:
        faults.poison(topic, payload=kind, schema_id=1)
    # A record from a producer with another registry: an id nobody here knows, and a
    # body that happens to be a valid Order.
    faults.poison(topic, payload=b"\x00\x7f\xff\xff\xff" + avro_body("ghost", 9))
    return topic


def avro_body(order_id: str, qty: int) -> bytes:
    import io

    import fastavro

    out = io.BytesIO()
    fastavro.schemaless_writer(
        out, fastavro.parse_schema(json.loads(ORDER)), {"order_id": order_id, "qty": qty}
    )
    return out.getvalue()


def kind_of(row: dict[str, Any]) -> str:
    headers = {h["key"]: bytes(h["value"]).decode() for h in row["headers"]}
    return headers.get("kafkatest.poison", "good")


def test_permissive_turns_undecodable_records_into_null(
    spark: Any,
    kafka_broker: Broker,
    kafka_topic: Any,
    kafka_faults: Faults,
    schema_registry: SchemaRegistryServer,
    checkpoint_dir: Any,
) -> None:
    topic = poisoned_topic(kafka_broker, kafka_topic, kafka_faults, schema_registry)
    capture = BatchCapture()
    query = job.start_stream(
        spark,
        kafka_broker.bootstrap_servers,
        topic,
        ORDER,
        "PERMISSIVE",
        capture,
        str(checkpoint_dir),
    )
    wait_for_query(query)
    seen = {kind_of(r): r["order"] for r in capture.rows if kind_of(r) != "good"}
    good = [r["order"] for r in capture.rows if kind_of(r) == "good"]
    assert [g["order_id"] for g in good] == ["o-0", "o-1", "o-2"]
    # Every kind of pill becomes an Order whose fields are all null (Spark 4's
    # PERMISSIVE gives a struct of nulls, not a null struct); the query goes on.
    assert {k: seen[k] for k in KINDS} == {k: {"order_id": None, "qty": None} for k in KINDS}
    # from_avro never reads the header: a foreign schema id with a decodable body is data.
    assert seen["bytes"] == {"order_id": "ghost", "qty": 9}


def test_failfast_fails_the_query(
    spark: Any,
    kafka_broker: Broker,
    kafka_topic: Any,
    kafka_faults: Faults,
    schema_registry: SchemaRegistryServer,
    checkpoint_dir: Any,
) -> None:
    topic = poisoned_topic(kafka_broker, kafka_topic, kafka_faults, schema_registry)
    capture = BatchCapture()
    query = job.start_stream(
        spark,
        kafka_broker.bootstrap_servers,
        topic,
        ORDER,
        "FAILFAST",
        capture,
        str(checkpoint_dir),
    )
    with pytest.raises(Exception, match="Malformed records are detected in record parsing"):
        wait_for_query(query)
    # The first batch (all the records) failed whole: not even the good records arrived.
    assert capture.rows == []


def test_a_job_built_with_v1_reads_records_written_with_v2(
    spark: Any,
    kafka_broker: Broker,
    kafka_topic: Any,
    schema_registry: SchemaRegistryServer,
    checkpoint_dir: Any,
) -> None:
    """The producer moves to v2 mid-stream (a field appended, with a default: BACKWARD
    allows it). from_avro decodes with the job's v1 as the writer schema, so v2 records
    decode *without error* and the new field is silently dropped, in FAILFAST too."""
    from kafkatest.scenarios.actions import RunContext, make_action

    fields = [{"name": "label", "type": "string"}, {"name": "n", "type": "int"}]
    v1 = {"type": "record", "name": "Event", "fields": fields}
    v2 = {**v1, "fields": [*fields, {"name": "region", "type": "string", "default": "eu"}]}
    ctx = RunContext(kafka_broker, {"src": kafka_topic()}, schema_registry=schema_registry)
    for action in (
        {"register_schema": {"topic": "src", "schema": v1}},
        {"seed": {"label": "old", "topic": "src", "count": 2}},
        {"evolve_schema": {"topic": "src", "schema": v2}},
        {"seed": {"label": "new", "topic": "src", "count": 2}},
    ):
        make_action(ctx, action)()
    capture = BatchCapture()
    query = job.start_stream(
        spark,
        kafka_broker.bootstrap_servers,
        ctx.topic("src"),
        json.dumps(v1),
        "FAILFAST",
        capture,
        str(checkpoint_dir),
    )
    wait_for_query(query)
    assert [r["order"] for r in capture.rows] == [
        {"label": "old", "n": 0},
        {"label": "old", "n": 1},
        {"label": "new", "n": 0},
        {"label": "new", "n": 1},
    ]
