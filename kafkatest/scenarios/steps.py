"""A scenario step's ``when`` made into the trigger that fires its actions."""

from __future__ import annotations

import functools
import time
from typing import Any

from kafkatest.errors import BrokerError
from kafkatest.scenarios.context import RunContext
from kafkatest.scenarios.events import BatchEvent
from kafkatest.scenarios.plan import BoundStep, Plan
from kafkatest.scenarios.triggers import (
    AfterBatch,
    AfterDelay,
    AtOffsets,
    BeforeStart,
    Trigger,
    WhenTrue,
)
from kafkatest.scenarios.watch import CheckpointFeed


def build_trigger(step: BoundStep, ctx: RunContext, feed: Any = None, baseline: int = 0) -> Trigger:
    """The trigger a step's ``when`` names, with the step's actions attached."""
    actions = [functools.partial(bound, ctx) for bound in step.actions]
    when = step.when
    if when == "before_start":
        return BeforeStart(actions)
    if not isinstance(when, dict) or len(when) != 1:
        raise ValueError(f"unknown trigger {when!r}")
    ((kind, arg),) = when.items()
    if kind == "after_batch":
        return AfterBatch(actions, batch_id=int(arg))
    if kind == "after_seconds":
        return AfterDelay(actions, seconds=float(arg))
    if kind == "at_offsets":
        return AtOffsets(actions, offsets=arg)
    if kind == "sink_written_uncommitted":
        if not isinstance(feed, CheckpointFeed):
            raise ValueError("sink_written_uncommitted needs a job in its own process")
        records = int(arg.get("records", 1))
        return WhenTrue(
            actions,
            label=f"sink got {records}+ records of an uncommitted batch",
            condition=_uncommitted_write(ctx, feed, arg["sink"], baseline, records),
        )
    raise ValueError(f"unknown trigger {kind!r}")


def _uncommitted_write(
    ctx: RunContext, feed: CheckpointFeed, sink: str, baseline: int, records: int
) -> Any:
    def condition() -> BatchEvent | None:
        planned = feed.planned()
        if planned is None or planned.committed:
            return None
        try:
            written = sum(ctx.broker.latest_offsets(sink).values()) - baseline
        except BrokerError:
            return None
        return planned if written >= records else None

    return condition


def fire_before_start(triggers: list[Trigger]) -> list[Trigger]:
    """Fire the ``before_start`` triggers now; the others, for a watch."""
    for trigger in triggers:
        if isinstance(trigger, BeforeStart):
            trigger.maybe_fire(None, time.monotonic())
    return [trigger for trigger in triggers if not isinstance(trigger, BeforeStart)]


def until_trigger(plan: Plan, stop: Any) -> Trigger | None:
    """Stops a query that goes on (``expect.outcome: continues``) at ``expect.until``."""
    if plan.scenario.expect.outcome != "continues" or not plan.until:
        return None
    return AtOffsets([stop], label="reached `until`", offsets=plan.until)
