"""Values `kafkatest capture` cannot look into (binary, Protobuf) under anonymization
rules: a rule for the whole key, value or header replaces it; a rule into its fields is
refused, so the personal data it names is never written and no value is lost silently.
JSON Schema values are decoded like Avro ones, so rules reach their fields, and replayed
with their schema."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from kafkatest import Broker
from kafkatest.cli import main
from kafkatest.records import Record
from kafkatest.schema_registry import SchemaRegistryServer
from kafkatest.seeding import seed

KEEP = {"retention.ms": "-1"}
#: Protobuf-like bytes (Confluent framing, schema 7, message index 0, then a field).
OPAQUE = b"\x00\x00\x00\x00\x07\x00\x0a\x0dann@example.com"


def _capture(broker: Broker, topic: str, out: Path, *extra: str) -> int:
    where = ("--bootstrap", broker.bootstrap_servers, "--topic", topic)
    return main(["capture", *where, "-o", str(out), "--salt", "s", *extra])


def _lines(path: Path) -> list[dict[str, object]]:
    return [e for e in map(json.loads, path.read_text().splitlines()) if "offset" in e]


def _opaque_topic(broker: Broker, topic: str) -> None:
    broker.produce(
        [Record(topic=topic, key=b"\xffk1", value=OPAQUE, headers=(("user", b"\xffann"),))]
    )


@pytest.mark.kafka_backends("emulator")
def test_a_rule_into_a_value_it_cannot_read_is_refused(
    kafka_broker: Broker, kafka_topic, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = kafka_topic(config=KEEP)
    _opaque_topic(kafka_broker, topic)
    out = tmp_path / "c.jsonl"
    assert _capture(kafka_broker, topic, out, "--anonymize", "email=hash") == 2
    err = capsys.readouterr().err
    assert f"the value of {topic}[0]@0 is not JSON, Avro or JSON Schema (binary)" in err
    assert "--schema-registry" in err and "Traceback" not in err
    assert not out.exists() or b"ann@example.com" not in out.read_bytes()


@pytest.mark.kafka_backends("emulator")
def test_whole_key_and_header_rules_replace_bytes_and_leave_the_value_whole(
    kafka_broker: Broker, kafka_topic, tmp_path: Path
) -> None:
    topic = kafka_topic(config=KEEP)
    _opaque_topic(kafka_broker, topic)
    out = tmp_path / "c.jsonl"
    rules = ("--anonymize", "key=hash", "--anonymize", "header:user=hash")
    assert _capture(kafka_broker, topic, out, *rules) == 0
    [entry] = _lines(out)
    assert set(entry["key"]) == {"text"} and len(entry["key"]["text"]) == 24  # type: ignore[index, arg-type]
    [[name, header]] = entry["headers"]  # type: ignore[misc]
    assert name == "user" and set(header) == {"text"}
    assert b"ann" not in out.read_bytes()
    # The binary value no rule names is written whole (it was written as null before).
    target = kafka_topic()
    seed(kafka_broker, target, out)
    [replayed] = kafka_broker.consume(target)
    assert replayed.value == OPAQUE
    assert replayed.key == entry["key"]["text"].encode()  # type: ignore[index]


JSON_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {"id": {"type": "integer"}, "email": {"type": "string"}},
    }
)


@pytest.mark.kafka_backends("emulator")
def test_json_schema_values_are_decoded_anonymized_and_replayed_with_their_schema(
    kafka_broker: Broker, kafka_topic, schema_registry: SchemaRegistryServer, tmp_path: Path
) -> None:
    topic = kafka_topic(config=KEEP)
    client = SchemaRegistryClient({"url": schema_registry.url})
    schema_id = client.register_schema(f"{topic}-value", Schema(JSON_SCHEMA, "JSON"))
    values = [{"id": n, "email": f"p{n % 2}@example.com"} for n in range(4)]
    framed = [b"\x00" + struct.pack(">I", schema_id) + json.dumps(v).encode() for v in values]
    kafka_broker.produce([Record(topic=topic, value=v) for v in framed])
    out = tmp_path / "c.jsonl"
    assert (
        _capture(
            kafka_broker,
            topic,
            out,
            "--schema-registry",
            schema_registry.url,
            "--anonymize",
            "email=hash",
        )
        == 0
    )
    entries = _lines(out)
    assert [e["value"]["schema_id"] for e in entries] == [schema_id] * 4  # type: ignore[index]
    emails = [e["value"]["json"]["email"] for e in entries]  # type: ignore[index]
    assert "example.com" not in out.read_text() and len(set(emails)) == 2
    assert [e["value"]["json"]["id"] for e in entries] == [0, 1, 2, 3]  # type: ignore[index]

    replay = SchemaRegistryServer().start()
    try:
        target = kafka_topic()
        seed(kafka_broker, target, out, schema_registry=replay.url)
        replayed = kafka_broker.consume(target)
        new_id = SchemaRegistryClient({"url": replay.url}).get_latest_version(f"{target}-value")
    finally:
        replay.close()
    for record, email in zip(replayed, emails, strict=True):
        assert record.value is not None
        assert record.value[:5] == b"\x00" + struct.pack(">I", new_id.schema_id)
        assert json.loads(record.value[5:])["email"] == email
