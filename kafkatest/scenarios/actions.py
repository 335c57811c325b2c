"""Every action a scenario step may name, declared once with `@action` (the faults are
declared with `@fault`, `faults/registry.py`, and join them here), and an action bound to
a run: its topic arguments named as the run names them, once, before the run starts.

A repro file and a test mean the same thing by ``delete_records``; the scenario-file
reference page (docs/reference/scenario-files.md) is made from `ACTIONS`.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from kafkatest.checkpoints import Damage, LogSnapshot, RecordedFault
from kafkatest.faults import Faults, faults_for
from kafkatest.faults.registry import FaultSpec, all_faults, canonical
from kafkatest.scenarios.context import JobControl, RunContext
from kafkatest.scenarios.parts import SEED_OPTIONAL, SEED_REQUIRED, SEED_SOURCES, SeedSpec
from kafkatest.seeding import SeedResult, seed as seed_topic

__all__ = ["ACTIONS", "Action", "BoundAction", "RunContext", "bind_action", "make_action"]

ActionFunction = Callable[[RunContext, dict[str, Any]], object]
F = TypeVar("F", bound=ActionFunction)
#: Arguments that name a topic: bound to the run's real name (`bind_action`).
TOPIC_ARGUMENTS = ("topic", "leader_of")
#: A fault parameter the run supplies (the job's checkpoint), never the scenario file.
RUN_SUPPLIED = "checkpoint"


@dataclass(frozen=True)
class Action:
    """One action: what it does (``run(ctx, args)``), its arguments and its help."""

    name: str
    run: ActionFunction
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    help: str = ""


#: Every action a scenario step may name. Old names (``broker_stop``) are resolved by
#: `canonical`; the arguments are checked when a scenario is loaded (`checks`).
ACTIONS: dict[str, Action] = {}


def action(*required: str, optional: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Declare a scenario action: its name is the function's, its help the first paragraph
    of its docstring, `required` and `optional` its arguments."""

    def declare(run: F) -> F:
        ACTIONS[run.__name__] = Action(run.__name__, run, required, optional, _summary(run))
        return run

    return declare


def _summary(function: Callable[..., Any]) -> str:
    """The first paragraph of `function`'s docstring, on one line."""
    return " ".join((inspect.getdoc(function) or "").split("\n\n")[0].split())


@dataclass(frozen=True)
class BoundAction:
    """An action with its arguments, topics already named as the run names them."""

    action: Action
    args: dict[str, Any]
    #: As the scenario wrote it, for the run's log.
    text: str

    def run(self, ctx: RunContext) -> object:
        return self.action.run(ctx, dict(self.args))

    def __call__(self, ctx: RunContext) -> object:
        """Run it as a step does, written into the run's log."""
        result = self.run(ctx)
        ctx.log.append(self.text)
        return result


def bind_action(action: dict[str, Any], rename: Callable[[str], str]) -> BoundAction:
    """``{name: {args}}`` bound to a run: `rename` gives a topic's real name."""
    if len(action) != 1:
        raise ValueError(f"an action is one {{name: args}} mapping, not {action!r}")
    ((name, args),) = action.items()
    name = canonical(name)
    if name not in ACTIONS:
        raise ValueError(f"unknown action {name!r}; known: {', '.join(sorted(ACTIONS))}")
    bound = {
        key: rename(value) if key in TOPIC_ARGUMENTS else value
        for key, value in (args or {}).items()
    }
    return BoundAction(ACTIONS[name], bound, f"{name} {args or ''}".strip())


def make_action(ctx: RunContext, action: dict[str, Any]) -> Callable[[], object]:
    """A callable for ``{name: {args}}`` (topics as the scenario names them) that logs
    what it did into the run's log."""
    bound = bind_action(action, ctx.topic)
    return lambda: bound(ctx)


@action(*SEED_REQUIRED, optional=(*SEED_SOURCES, *SEED_OPTIONAL))
def seed(ctx: RunContext, args: dict[str, Any]) -> SeedResult:
    """Seed records to a topic: `count` generated ones (identities ``<label>-<n>``, unique
    across seeds), or a `capture` file replayed."""
    spec = SeedSpec.parse(args)
    if spec.label in ctx.seeds:
        raise ValueError(f"seed label {spec.label!r} is used twice")
    if spec.capture is not None:
        # Replayed as captured: partitions, timestamps, headers; Avro values registered
        # again in the run's registry (the records carry the ids it gives).
        ctx.seeds[spec.label] = seed_topic(
            ctx.broker, spec.topic, spec.capture, schema_registry=ctx.schema_registry
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
    ctx.seeds[spec.label] = seed_topic(
        ctx.broker,
        spec.topic,
        records,
        id_prefix=f"{spec.label}-",
        value_format="json" if schema is None else "avro",
        schema=schema,
        schema_registry=ctx.schema_registry,
    )
    return ctx.seeds[spec.label]


@action("topic", optional=("partitions",))
def create_topic(ctx: RunContext, args: dict[str, Any]) -> object:
    """Create a topic (1 partition unless `partitions`)."""
    return ctx.broker.create_topic(args["topic"], partitions=int(args.get("partitions", 1)))


@action("seconds")
def wait(ctx: RunContext, args: dict[str, Any]) -> object:
    """Hold the step's later actions back `seconds` (a pause: pause, wait, resume)."""
    time.sleep(float(args["seconds"]))
    return None


@action("topic", "schema")
def register_schema(ctx: RunContext, args: dict[str, Any]) -> int:
    """Register an Avro schema for the topic's values; later seeds write with it."""
    return _register(ctx, args, evolve=False)


@action("topic", "schema")
def evolve_schema(ctx: RunContext, args: dict[str, Any]) -> int:
    """Move the topic's producer to a new schema version mid-stream; the registry refuses
    (with its 409) a version its compatibility level does not allow."""
    return _register(ctx, args, evolve=True)


def _register(ctx: RunContext, args: dict[str, Any], evolve: bool) -> int:
    import json

    from kafkatest._ground.lean_imports import import_schema_registry_client

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
    schema_id = client.register_schema(f"{topic}-value", Schema(text, "AVRO"))
    ctx.schemas[topic] = text
    return schema_id


@action(optional=("broker", "leader_of", "partition"))
def stop_one_broker(ctx: RunContext, args: dict[str, Any]) -> object:
    """Stop a broker: `broker: N`, or `leader_of: topic` (and `partition`, default 0), the
    broker leading it now, which a scenario written in advance cannot know."""
    if ("broker" in args) == ("leader_of" in args):
        raise ValueError("stop_one_broker takes either broker: N or leader_of: topic")
    if "broker" in args:
        broker = int(args["broker"])
    else:
        topic, partition = args["leader_of"], int(args.get("partition", 0))
        info = ctx.broker.admin().list_topics(topic=topic, timeout=10).topics[topic]
        broker = int(info.partitions[partition].leader)
    return faults_for(ctx.broker).stop_broker(broker)


@action(optional=("broker",))
def start_one_broker(ctx: RunContext, args: dict[str, Any]) -> object:
    """Start a broker again: `broker: N`, or without it every broker a fault stopped."""
    faults = faults_for(ctx.broker)
    if "broker" in args:
        return faults.start_broker(int(args["broker"]))
    for fault in faults.active():
        if fault["kind"] == "broker_stopped":
            faults.start_broker(int(fault["broker"]))
    return None


def _job(ctx: RunContext) -> JobControl:
    if ctx.job is None:
        raise ValueError("this action needs a running job")
    return ctx.job


#: The actions on the running job: the `JobControl` method each calls, and its help.
_JOB_ACTIONS = {
    "kill_job": ("kill", "SIGKILL the job's process (mode: process), as a crashed driver dies."),
    "restart_job": (
        "restart",
        "Kill the job (or stop its query) and start it again on its checkpoint.",
    ),
    "stop_query": ("stop", "Stop the job's query (or kill its process)."),
    "start_query": ("start", "Start the job again on its checkpoint."),
}


def _on_job(method: str) -> ActionFunction:
    def run(ctx: RunContext, args: dict[str, Any]) -> None:
        getattr(_job(ctx), method)()

    return run


for _name, (_method, _help) in _JOB_ACTIONS.items():
    ACTIONS[_name] = Action(_name, _on_job(_method), help=_help)


def _offsets(raw: Any) -> dict[int, int] | int:
    return int(raw) if isinstance(raw, (int, str)) else {int(p): int(o) for p, o in raw.items()}


def _fault_action(spec: FaultSpec) -> ActionFunction:
    """A scenario action for a declared fault (its topic already the run's real name)."""

    def run(ctx: RunContext, args: dict[str, Any]) -> object:
        params: dict[str, Any] = {}
        if any(param.name == RUN_SUPPLIED for param in spec.params):
            if ctx.checkpoint is None:
                raise ValueError(f"{spec.name} needs the job's checkpoint: a streaming job")
            params[RUN_SUPPLIED] = ctx.checkpoint
        for param in spec.params:
            if param.name == RUN_SUPPLIED or args.get(param.name) is None:
                continue
            value = args[param.name]
            if set(param.types) == {int, dict}:
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


for _spec in all_faults().values():
    if _spec.scenario:
        ACTIONS[_spec.name] = Action(
            _spec.name,
            _fault_action(_spec),
            tuple(p.name for p in _spec.params if p.required and p.name != RUN_SUPPLIED),
            tuple(p.name for p in _spec.params if not p.required and p.name != RUN_SUPPLIED),
            # The Faults method's docstring (the registry's `run` only calls it by name).
            _summary(getattr(Faults, _spec.name, _spec.run)) or _spec.help,
        )

#: Arguments of each action (required, optional), as `ACTIONS` declares them.
ACTION_PARAMS = {name: (a.required, a.optional) for name, a in ACTIONS.items()}
