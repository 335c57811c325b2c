"""The scenario actions register_schema / evolve_schema / poison: a producer moving to a new
schema version mid-stream, and a poison pill, as a scenario file says them."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("fastavro", reason="pip install 'kafkatest[schemas]'")

from confluent_kafka.schema_registry.error import SchemaRegistryError

from kafkatest.brokers.base import Broker
from kafkatest.scenarios.actions import RunContext, make_action
from kafkatest.scenarios.checks import step_problems
from kafkatest.scenarios.spec import Step
from kafkatest.schema_registry import SchemaRegistryServer
from kafkatest.sinks import topic_rows

FIELDS = [{"name": "label", "type": "string"}, {"name": "n", "type": "int"}]
V1 = {"type": "record", "name": "Event", "fields": FIELDS}
V2 = {
    "type": "record",
    "name": "Event",
    "fields": [*FIELDS, {"name": "source", "type": "string", "default": "v2"}],
}
BREAKING = {
    "type": "record",
    "name": "Event",
    "fields": [*FIELDS, {"name": "must", "type": "long"}],
}


def run(ctx: RunContext, name: str, **args: Any) -> Any:
    return make_action(ctx, {name: args})()


def test_the_producer_moves_to_a_new_version_mid_stream(
    kafka_broker: Broker, kafka_topic: Any, schema_registry: SchemaRegistryServer
) -> None:
    ctx = RunContext(kafka_broker, {"src": kafka_topic()}, schema_registry=schema_registry)
    first = run(ctx, "register_schema", topic="src", schema=V1)
    run(ctx, "seed", label="a", topic="src", count=2)
    second = run(ctx, "evolve_schema", topic="src", schema=json.dumps(V2))
    run(ctx, "seed", label="b", topic="src", count=2)
    run(ctx, "poison", topic="src", payload="truncated")
    assert second != first
    rows = topic_rows(kafka_broker, ctx.topic("src"), value="avro", schema_registry=schema_registry)
    assert rows[-1]["value"] == b"\x00\x00\x00"  # the pill does not decode: it stays bytes
    assert [r["value"] for r in rows[:4]] == [
        {"label": "a", "n": 0},
        {"label": "a", "n": 1},
        {"label": "b", "n": 0, "source": "v2"},  # written with v2: its default filled in
        {"label": "b", "n": 1, "source": "v2"},
    ]
    assert ctx.log[-1].startswith("poison")
    # A version the level (BACKWARD) forbids is refused with the registry's 409.
    with pytest.raises(SchemaRegistryError) as refused:
        run(ctx, "evolve_schema", topic="src", schema=BREAKING)
    assert refused.value.error_code == 409


def test_schema_actions_say_what_they_need(kafka_broker: Broker, kafka_topic: Any) -> None:
    ctx = RunContext(kafka_broker, {"src": kafka_topic()})
    with pytest.raises(ValueError, match="needs a registry"):
        run(ctx, "register_schema", topic="src", schema=V1)
    problems = step_problems(
        "steps[0]",
        Step.parse({"when": {"after_s": 0}, "do": [{"evolve_schema": {"topic": "src"}}]}),
        {"src": 1},
    )
    assert any("schema" in p for p in problems), problems
