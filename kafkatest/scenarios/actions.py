"""Scenario actions by name: the faults (through `faults_for`), seeding, and the job itself.

Every action a scenario file can name is here, so a repro file and a test mean
the same thing by ``delete_records``; topic arguments are logical names.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from kafkatest.brokers.base import Broker
from kafkatest.checkpoints import Damage, LogSnapshot, RecordedFault
from kafkatest.faults import faults_for
from kafkatest.faults.registry import FaultSpec, all_faults, canonical
from kafkatest.scenarios.parts import SEED_OPTIONAL, SEED_REQUIRED, SEED_SOURCES, SeedSpec
from kafkatest.seeding import SeedResult, seed


class JobControl(Protocol):
    """What actions may do to the job under test."""

    def kill(self) -> None: ...
    def restart(self) -> None: ...
    def stop(self) -> None: ...
    def start(self) -> None: ...


@dataclass
class RunContext:
    """The run's broker, real topic names, seeds so far and the job's handle."""

    broker: Broker
    names: dict[str, str]
    seeds: dict[str, SeedResult] = field(default_factory=dict)
    job: JobControl | None = None
    log: list[str] = field(default_factory=list)
    #: Process groups of job processes started in this run (all killed by its end).
    process_groups: list[int] = field(default_factory=list)
    #: The registry schema actions use (`run_scenario(..., schema_registry=)`).
    schema_registry: Any = None
    #: logical topic -> the Avro schema its producer writes with now (set by
    #: register_schema / evolve_schema; seeds to that topic are then Avro).
    schemas: dict[str, str] = field(default_factory=dict)
    #: The job's checkpoint directory: the one checkpoint actions damage (a scenario
    #: written in advance cannot know the path, so a file never names it).
    checkpoint: str | None = None
    #: Each checkpoint fault applied, with the checkpoint's logs before and after it, for
    #: the delivery report to explain what the restart did.
    checkpoint_faults: list[RecordedFault] = field(default_factory=list)

    def topic(self, logical: str) -> str:
        try:
            return self.names[logical]
        except KeyError:
            raise ValueError(f"unknown topic {logical!r}; declared: {sorted(self.names)}") from None


def seed_records(ctx: RunContext, spec: SeedSpec) -> SeedResult:
    """Seed `spec.count` records; identities ``<label>-<n>`` stay unique across seeds."""
    if spec.label in ctx.seeds:
        raise ValueError(f"seed label {spec.label!r} is used twice")
    if spec.capture is not None:
        # Replayed as captured: partitions, timestamps, headers; Avro values registered
        # again in the run's registry (the records carry the ids it gives).
        ctx.seeds[spec.label] = seed(
            ctx.broker, ctx.topic(spec.topic), spec.capture, schema_registry=ctx.schema_registry
        )
        return ctx.seeds[spec.label]
    records = [
        {
            "value": {"label": spec.label, "n": n},
            "key": f"{spec.label}-{n}",
            "partition": spec.partition,
        }
        for n in range(spec.count)
    ]
    schema = ctx.schemas.get(spec.topic)
    result = seed(
        ctx.broker,
        ctx.topic(spec.topic),
        records,
        id_prefix=f"{spec.label}-",
        value_format="json" if schema is None else "avro",
        schema=schema,
        schema_registry=ctx.schema_registry,
    )
    ctx.seeds[spec.label] = result
    return result


def register_schema(ctx: RunContext, args: dict[str, Any], evolve: bool = False) -> int:
    """Register an Avro schema for the topic's values; later seeds write with it.

    ``evolve_schema`` is the same move for a topic that already has one: the producer
    switches to a new version mid-stream, and the registry refuses (with its 409) a
    version its compatibility level does not allow.
    """
    import json

    from kafkatest.lean_imports import import_schema_registry_client

    import_schema_registry_client()
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    from kafkatest.seeding.wire import registry_url

    name = "evolve_schema" if evolve else "register_schema"
    if ctx.schema_registry is None:
        raise ValueError(f"{name} needs a registry: run_scenario(..., schema_registry=...)")
    topic = str(args["topic"])
    if evolve and topic not in ctx.schemas:
        raise ValueError(f"evolve_schema: topic {topic!r} has no schema yet; register_schema first")
    raw = args["schema"]
    text = raw if isinstance(raw, str) else json.dumps(raw)
    client = SchemaRegistryClient({"url": registry_url(ctx.schema_registry)})
    schema_id = client.register_schema(f"{ctx.topic(topic)}-value", Schema(text, "AVRO"))
    ctx.schemas[topic] = text
    return schema_id


def _job(ctx: RunContext) -> JobControl:
    if ctx.job is None:
        raise ValueError("this action needs a running job")
    return ctx.job


def _offsets(raw: Any) -> dict[int, int] | int:
    return int(raw) if isinstance(raw, (int, str)) else {int(p): int(o) for p, o in raw.items()}


#: A fault parameter the run supplies (the job's checkpoint), never the scenario file.
RUN_SUPPLIED = "checkpoint"


def _fault_action(spec: FaultSpec) -> Callable[[RunContext, dict[str, Any]], object]:
    """A scenario action for a declared fault: topics named as the scenario names them."""

    def run(ctx: RunContext, args: dict[str, Any]) -> object:
        params: dict[str, Any] = {}
        if any(param.name == RUN_SUPPLIED for param in spec.params):
            if ctx.checkpoint is None:
                raise ValueError(f"{spec.name} needs the job's checkpoint: a streaming job")
            params[RUN_SUPPLIED] = ctx.checkpoint
        for param in spec.params:
            if param.name == RUN_SUPPLIED:
                continue
            if args.get(param.name) is None:
                continue
            value = args[param.name]
            if param.name == "topic":
                value = ctx.topic(value)
            elif set(param.types) == {int, dict}:
                value = _offsets(value)
            elif param.types == (int,):
                value = int(value)
            params[param.name] = value
        if RUN_SUPPLIED not in params:
            return spec.run(faults_for(ctx.broker), **params)
        before = LogSnapshot.read(params[RUN_SUPPLIED])
        done = spec.run(faults_for(ctx.broker), **params)
        if isinstance(done, Damage):
            after = LogSnapshot.read(params[RUN_SUPPLIED])
            ctx.checkpoint_faults.append(RecordedFault(done, before, after))
        return done

    return run


#: What a scenario may do besides the faults: seed, wait, schemas, its job, its brokers.
_SCENARIO_ACTIONS: dict[str, Callable[[RunContext, dict[str, Any]], object]] = {
    "seed": lambda ctx, a: seed_records(ctx, SeedSpec.parse(a)),
    "create_topic": lambda ctx, a: ctx.broker.create_topic(
        ctx.topic(a["topic"]), partitions=int(a.get("partitions", 1))
    ),
    # Holds the step's later actions back (a pause of N seconds: pause, wait, resume).
    "wait": lambda ctx, a: time.sleep(float(a["seconds"])),
    "register_schema": lambda ctx, a: register_schema(ctx, a),
    "evolve_schema": lambda ctx, a: register_schema(ctx, a, evolve=True),
    # stop_broker by id or by what it leads (a scenario written in advance cannot know).
    "stop_one_broker": lambda ctx, a: faults_for(ctx.broker).stop_broker(_one_broker(ctx, a)),
    "start_one_broker": lambda ctx, a: _start_brokers(ctx, a),
    "kill_job": lambda ctx, a: _job(ctx).kill(),
    "restart_job": lambda ctx, a: _job(ctx).restart(),
    "stop_query": lambda ctx, a: _job(ctx).stop(),
    "start_query": lambda ctx, a: _job(ctx).start(),
}
_SCENARIO_PARAMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "seed": (SEED_REQUIRED, (*SEED_SOURCES, *SEED_OPTIONAL)),
    "create_topic": (("topic",), ("partitions",)),
    "wait": (("seconds",), ()),
    "register_schema": (("topic", "schema"), ()),
    "evolve_schema": (("topic", "schema"), ()),
    "stop_one_broker": ((), ("broker", "leader_of", "partition")),
    "start_one_broker": ((), ("broker",)),
    **{name: ((), ()) for name in ("kill_job", "restart_job", "stop_query", "start_query")},
}
_FAULTS = {name: spec for name, spec in all_faults().items() if spec.scenario}

#: Every action a scenario step may name: the declared faults (`faults/registry.py`)
#: and the scenario's own. Old names (``broker_stop``) are resolved by `canonical`.
ACTIONS: dict[str, Callable[[RunContext, dict[str, Any]], object]] = {
    **{name: _fault_action(spec) for name, spec in _FAULTS.items()},
    **_SCENARIO_ACTIONS,
}

#: Arguments of each action (required, optional), checked when a scenario is loaded.
ACTION_PARAMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    **{
        name: (
            tuple(p.name for p in spec.params if p.required and p.name != RUN_SUPPLIED),
            tuple(p.name for p in spec.params if not p.required and p.name != RUN_SUPPLIED),
        )
        for name, spec in _FAULTS.items()
    },
    **_SCENARIO_PARAMS,
}


def _one_broker(ctx: RunContext, args: dict[str, Any]) -> int:
    """`broker: N`, or `leader_of: topic` (with `partition`, default 0): the broker
    leading it now, which a scenario written in advance cannot know."""
    if ("broker" in args) == ("leader_of" in args):
        raise ValueError("stop_one_broker takes either broker: N or leader_of: topic")
    if "broker" in args:
        return int(args["broker"])
    topic, partition = ctx.topic(args["leader_of"]), int(args.get("partition", 0))
    info = ctx.broker.admin().list_topics(topic=topic, timeout=10).topics[topic]
    return int(info.partitions[partition].leader)


def _start_brokers(ctx: RunContext, args: dict[str, Any]) -> None:
    """`broker: N`, or without it every broker a fault stopped."""
    faults = faults_for(ctx.broker)
    if "broker" in args:
        faults.start_broker(int(args["broker"]))
        return
    for fault in faults.active():
        if fault["kind"] == "broker_stopped":
            faults.start_broker(int(fault["broker"]))


def make_action(ctx: RunContext, action: dict[str, Any]) -> Callable[[], object]:
    """A callable for ``{name: {args}}`` that logs what it did into the run's log."""
    if len(action) != 1:
        raise ValueError(f"an action is one {{name: args}} mapping, not {action!r}")
    ((name, args),) = action.items()
    name = canonical(name)
    if name not in ACTIONS:
        raise ValueError(f"unknown action {name!r}; known: {', '.join(sorted(ACTIONS))}")
    run = ACTIONS[name]

    def act() -> object:
        result = run(ctx, dict(args or {}))
        ctx.log.append(f"{name} {args or ''}".strip())
        return result

    return act
