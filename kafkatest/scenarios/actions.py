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
from kafkatest.faults import faults_for
from kafkatest.scenarios.spec import SeedSpec
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

    def topic(self, logical: str) -> str:
        try:
            return self.names[logical]
        except KeyError:
            raise ValueError(f"unknown topic {logical!r}; declared: {sorted(self.names)}") from None


def seed_records(ctx: RunContext, spec: SeedSpec) -> SeedResult:
    """Seed `spec.count` records; identities ``<label>-<n>`` stay unique across seeds."""
    if spec.label in ctx.seeds:
        raise ValueError(f"seed label {spec.label!r} is used twice")
    records = [
        {
            "value": {"label": spec.label, "n": n},
            "key": f"{spec.label}-{n}",
            "partition": spec.partition,
        }
        for n in range(spec.count)
    ]
    result = seed(ctx.broker, ctx.topic(spec.topic), records, id_prefix=f"{spec.label}-")
    ctx.seeds[spec.label] = result
    return result


def _job(ctx: RunContext) -> JobControl:
    if ctx.job is None:
        raise ValueError("this action needs a running job")
    return ctx.job


def _offsets(raw: Any) -> dict[int, int] | int:
    return int(raw) if isinstance(raw, (int, str)) else {int(p): int(o) for p, o in raw.items()}


ACTIONS: dict[str, Callable[[RunContext, dict[str, Any]], object]] = {
    "seed": lambda ctx, a: seed_records(ctx, SeedSpec.parse(a)),
    "delete_topic": lambda ctx, a: faults_for(ctx.broker).delete_topic(ctx.topic(a["topic"])),
    "create_topic": lambda ctx, a: ctx.broker.create_topic(
        ctx.topic(a["topic"]), partitions=int(a.get("partitions", 1))
    ),
    "recreate_topic": lambda ctx, a: faults_for(ctx.broker).recreate_topic(
        ctx.topic(a["topic"]), None if a.get("partitions") is None else int(a["partitions"])
    ),
    "delete_records": lambda ctx, a: faults_for(ctx.broker).delete_records(
        ctx.topic(a["topic"]), _offsets(a["before"])
    ),
    "age_out_records": lambda ctx, a: faults_for(ctx.broker).age_out_records(ctx.topic(a["topic"])),
    "add_partitions": lambda ctx, a: faults_for(ctx.broker).add_partitions(
        ctx.topic(a["topic"]), int(a["total"])
    ),
    "broker_stop": lambda ctx, a: faults_for(ctx.broker).stop(),
    "broker_start": lambda ctx, a: faults_for(ctx.broker).start(),
    "broker_restart": lambda ctx, a: faults_for(ctx.broker).restart(),
    "broker_pause": lambda ctx, a: faults_for(ctx.broker).pause(),
    "broker_resume": lambda ctx, a: faults_for(ctx.broker).resume(),
    "move_leader": lambda ctx, a: faults_for(ctx.broker).move_leader(
        ctx.topic(a["topic"]),
        int(a.get("partition", 0)),
        None if a.get("to_broker") is None else int(a["to_broker"]),
    ),
    # Holds the step's later actions back (a pause of N seconds: pause, wait, resume).
    "wait": lambda ctx, a: time.sleep(float(a["seconds"])),
    "kill_job": lambda ctx, a: _job(ctx).kill(),
    "restart_job": lambda ctx, a: _job(ctx).restart(),
    "stop_query": lambda ctx, a: _job(ctx).stop(),
    "start_query": lambda ctx, a: _job(ctx).start(),
}


#: Arguments of each action (required, optional), checked when a scenario is loaded.
#: An action missing here is only checked by name; add yours when you add an action.
ACTION_PARAMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "seed": (("label", "topic", "count"), ("partition",)),
    "delete_topic": (("topic",), ()),
    "create_topic": (("topic",), ("partitions",)),
    "recreate_topic": (("topic",), ("partitions",)),
    "delete_records": (("topic", "before"), ()),
    "age_out_records": (("topic",), ()),
    "add_partitions": (("topic", "total"), ()),
    "move_leader": (("topic",), ("partition", "to_broker")),
    "wait": (("seconds",), ()),
    **{
        name: ((), ())
        for name in (
            "broker_stop",
            "broker_start",
            "broker_restart",
            "broker_pause",
            "broker_resume",
            "kill_job",
            "restart_job",
            "stop_query",
            "start_query",
        )
    },
}


def make_action(ctx: RunContext, action: dict[str, Any]) -> Callable[[], object]:
    """A callable for ``{name: {args}}`` that logs what it did into the run's log."""
    if len(action) != 1:
        raise ValueError(f"an action is one {{name: args}} mapping, not {action!r}")
    ((name, args),) = action.items()
    if name not in ACTIONS:
        raise ValueError(f"unknown action {name!r}; known: {', '.join(sorted(ACTIONS))}")
    run = ACTIONS[name]

    def act() -> object:
        result = run(ctx, dict(args or {}))
        ctx.log.append(f"{name} {args or ''}".strip())
        return result

    return act
