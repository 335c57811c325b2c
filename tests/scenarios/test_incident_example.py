"""An incident, end to end (docs/how-to/reproduce-an-incident.md): capture what a
failed job was reading from a secured cluster with a schema registry, hash the personal
data, and reproduce the failure on a test broker from a scenario file that points at the
capture. A secured emulator with its own registry stands in for production."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from pyspark.sql import SparkSession

from kafkatest import Broker
from kafkatest.assertions import assert_query_failed
from kafkatest.brokers.registry import start_broker
from kafkatest.cli import main
from kafkatest.scenarios import run_scenario
from kafkatest.scenarios.spec import load_scenario
from kafkatest.schema_registry import SchemaRegistryServer
from kafkatest.seeding import seed

JOB = Path(__file__).resolve().parents[2] / "fixtures" / "jobs" / "incident_payments.py"
SCHEMA = {
    "type": "record",
    "name": "Payment",
    "fields": [
        {"name": "payment_id", "type": "string"},
        {"name": "account", "type": "string"},
        {"name": "email", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "currency", "type": "string"},
    ],
}
# The scenario file, written beside the capture: the capture is the seed.
SCENARIO = """
name: incident-4711-unknown-currency
job: {job}:start_stream
topics: {{payments: 2, euros: 1}}
source: payments
sink: euros
seed:
  - {{label: incident, topic: payments, capture: incident-4711.jsonl.gz}}
expect:
  outcome: fails
  error: [no rate for currency XBT]
  delivery: none
timeout_s: 120
"""


def payment(n: int) -> dict[str, object]:
    """Payment n: partition n % 2, offset n // 2; one (p1 @ 38) in a currency the job lacks."""
    currency = "XBT" if n == 77 else ("EUR", "USD", "GBP")[n % 3]
    value = {
        "payment_id": f"pay-{n}",
        "account": f"acct-{n % 7}",
        "email": f"customer{n % 9}@example.com",
        "amount": 10.0 + n,
        "currency": currency,
    }
    return {"key": f"pay-{n}", "value": value, "partition": n % 2}


@pytest.fixture
def production() -> Iterator[tuple[Broker, SchemaRegistryServer]]:
    """A SASL_SSL cluster with a registry: 100 payments, and the payments job's consumer
    group, which had committed offsets 40 (partition 0) and 35 (partition 1) when the
    job failed."""
    broker = start_broker(
        "emulator",
        security_protocol="SASL_SSL",
        sasl_mechanisms=["SCRAM-SHA-512"],
        users={"oncall": "oncall-secret"},
    )
    registry = SchemaRegistryServer().start()
    try:
        broker.create_topic("payments", partitions=2, config={"retention.ms": "-1"})
        rows = [payment(n) for n in range(100)]
        seed(broker, "payments", rows, value_format="avro", schema=SCHEMA, schema_registry=registry)
        group = Consumer({**broker.client_config(), "group.id": "payments-job"})
        committed = [TopicPartition("payments", 0, 40), TopicPartition("payments", 1, 35)]
        group.commit(offsets=committed, asynchronous=False)
        group.close()
        yield broker, registry
    finally:
        registry.close()
        broker.close()


def test_an_incident_is_captured_replayed_and_reproduced(
    production: tuple[Broker, SchemaRegistryServer],
    kafka_broker: Broker,
    schema_registry: SchemaRegistryServer,
    spark: SparkSession,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prod, prod_registry = production
    # 1. Capture the 10 records before and after the group's offsets, emails hashed.
    monkeypatch.setenv("KAFKATEST_SASL_PASSWORD", "oncall-secret")
    capture = tmp_path / "incident-4711.jsonl.gz"
    code = main(
        [
            *("capture", "--bootstrap", prod.bootstrap_servers, "--topic", "payments"),
            *("--security-protocol", "SASL_SSL", "--sasl-mechanism", "SCRAM-SHA-512"),
            *("--sasl-username", "oncall", "--ca-file", prod.client_config()["ssl.ca.location"]),
            *("--schema-registry", prod_registry.url),
            *("--group", "payments-job", "--before", "10", "--after", "10"),
            *("--anonymize", "email=hash", "--salt", "team-salt", "-o", str(capture)),
        ]
    )
    assert code == 0
    with gzip.open(capture, "rt") as text:
        captured = text.read()
    assert "@example.com" not in captured  # hashed before anything was written
    assert '"currency":"XBT"' in captured  # the record the job choked on

    # 2. The scenario file, beside its capture; `kafkatest repro incident-4711.yaml` runs it.
    path = tmp_path / "incident-4711.yaml"
    path.write_text(SCENARIO.format(job=JOB))
    scenario = load_scenario(path)

    # 3. Replayed into the test broker and run: the job fails as it did in production.
    result = run_scenario(
        scenario, kafka_broker, spark, tmp_path / "checkpoint", schema_registry=schema_registry
    )
    assert result.ok, result.text()
    assert_query_failed(result.run, message="no rate for currency XBT")
    # The 40 records around the group's offsets: p0 30-49 and p1 25-44. The emulator
    # keeps their production offsets; real Kafka writes them from offset 0.
    placed = sorted((r.partition, r.offset) for r in result.expected)
    first = {0: 30, 1: 25} if kafka_broker.backend == "emulator" else {0: 0, 1: 0}
    assert placed == [(p, first[p] + i) for p in (0, 1) for i in range(20)]
