"""A capture from a SASL_SSL broker with a schema registry, anonymized and replayed into
another topic, gives back the same partitions, order, timestamps, headers and values
(anonymized fields replaced the same way for the same original); the same salt gives
the same file, byte for byte."""

from __future__ import annotations

import gzip
import io
from collections.abc import Callable
from pathlib import Path

import pytest
from fastavro import parse_schema, schemaless_reader

from kafkatest import Broker
from kafkatest.cli import main
from kafkatest.records import Record
from kafkatest.schema_registry import SchemaRegistryServer
from kafkatest.seeding import seed

SCHEMA = {
    "type": "record",
    "name": "Customer",
    "fields": [
        {"name": "id", "type": "int"},
        {"name": "email", "type": "string"},
        {"name": "name", "type": "string"},
        {"name": "plan", "type": "string"},
    ],
}
#: Captured records keep their (old) timestamps: the topics keep them too.
KEEP = {"retention.ms": "-1"}
EMAILS = ["ann@example.com", "bob@example.com", "ann@example.com", "cy@example.com"]


def _seed(broker: Broker, topic: str, registry: SchemaRegistryServer) -> list[Record]:
    broker.create_topic(topic, partitions=2, config=KEEP)
    rows = [
        {
            "key": f"c{n % 3}",
            "value": {"id": n, "email": EMAILS[n % 4], "name": f"Person {n % 4}", "plan": "gold"},
            "partition": n % 2,
            "timestamp_ms": 1_700_000_000_000 + 1000 * n,
            "headers": {"trace": f"t{n}", "user": EMAILS[n % 4]},
        }
        for n in range(12)
    ]
    seed(broker, topic, rows, value_format="avro", schema=SCHEMA, schema_registry=registry)
    return broker.consume(topic)


def _capture(broker: Broker, topic: str, registry: str, out: Path) -> None:
    config = broker.client_config("alice")
    code = main(
        [
            "capture",
            *("--bootstrap", broker.bootstrap_servers, "--topic", topic),
            *("--security-protocol", "SASL_SSL", "--sasl-mechanism", config["sasl.mechanism"]),
            *("--sasl-username", "alice", "--ca-file", config["ssl.ca.location"]),
            *("--schema-registry", registry, "--salt", "incident-42"),
            *("--anonymize", "email=hash", "--anonymize", "name=fake:name"),
            *("--anonymize", "header:user=hash", "-o", str(out)),
        ]
    )
    assert code == 0


def _decoded(record: Record) -> dict[str, object]:
    assert record.value is not None and record.value[0] == 0
    return dict(schemaless_reader(io.BytesIO(record.value[5:]), parse_schema(SCHEMA), None))


def test_a_secured_capture_replays_with_personal_data_replaced(
    secured: Callable[[str], Broker],
    schema_registry: SchemaRegistryServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    broker = secured("sasl_ssl")
    monkeypatch.setenv("KAFKATEST_SASL_PASSWORD", "alice-secret")
    source = f"capture-src-{tmp_path.name[-12:]}"
    original = _seed(broker, source, schema_registry)
    first, second = tmp_path / "one.jsonl.gz", tmp_path / "two.jsonl.gz"
    _capture(broker, source, schema_registry.url, first)
    _capture(broker, source, schema_registry.url, second)
    assert first.read_bytes() == second.read_bytes()

    replay_registry = SchemaRegistryServer().start()
    try:
        target = f"capture-dst-{tmp_path.name[-12:]}"
        broker.create_topic(target, partitions=2, config=KEEP)
        result = seed(broker, target, first, schema_registry=replay_registry.url)
        replayed = broker.consume(target)
    finally:
        replay_registry.close()

    assert len(result) == len(replayed) == 12
    # An empty target topic: every record lands at its original offset.
    assert result.offsets == {(r.partition, r.offset): r.offset for r in original}  # type: ignore[attr-defined]
    assert [(r.partition, r.offset, r.timestamp_ms, r.key) for r in replayed] == [
        (r.partition, r.offset, r.timestamp_ms, r.key) for r in original
    ]
    before = [_decoded(r) for r in original]
    after = [_decoded(r) for r in replayed]
    assert [(a["id"], a["plan"]) for a in after] == [(b["id"], b["plan"]) for b in before]
    assert all(
        a["email"] != b["email"] and a["name"] != b["name"]
        for a, b in zip(after, before, strict=True)
    )
    # One original, one replacement: joins and dedup keys still line up.
    assert len({a["email"] for a in after}) == len({b["email"] for b in before}) == 3
    assert len({(a["email"], b["email"]) for a, b in zip(after, before, strict=True)}) == 3
    headers = [dict(r.headers) for r in replayed]
    assert [h["trace"] for h in headers] == [dict(r.headers)["trace"] for r in original]
    assert all(h["user"] != dict(r.headers)["user"] for h, r in zip(headers, original, strict=True))
    with gzip.open(first, "rt", encoding="utf-8") as text:
        assert "example.com" not in text.read()
