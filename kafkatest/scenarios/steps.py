"""A scenario step's ``when`` made into the trigger that fires its actions."""

from __future__ import annotations

from typing import Any

from kafkatest.errors import BrokerError
from kafkatest.scenarios.actions import RunContext, make_action
from kafkatest.scenarios.events import BatchEvent
from kafkatest.scenarios.spec import Scenario, Step
from kafkatest.scenarios.triggers import (
    AfterBatch,
    AfterDelay,
    AtOffsets,
    BeforeStart,
    Trigger,
    WhenTrue,
)
from kafkatest.scenarios.watch import CheckpointFeed


def build_trigger(
    step: Step, ctx: RunContext, feed: Any = None, baseline: int = 0, sink: str = ""
) -> Trigger:
    """The trigger a step's ``when`` names, with the step's actions attached."""
    actions = [make_action(ctx, a) for a in step.do]
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
        offsets = {
            (ctx.topic(t), int(p)): int(o) for t, parts in arg.items() for p, o in parts.items()
        }
        return AtOffsets(actions, offsets=offsets)
    if kind == "sink_written_uncommitted":
        if not isinstance(feed, CheckpointFeed):
            raise ValueError("sink_written_uncommitted needs a job in its own process")
        options = arg if isinstance(arg, dict) else {}
        records = int(options.get("records", 1))
        watched_sink = ctx.topic(str(options.get("sink", sink)))
        return WhenTrue(
            actions,
            label=f"sink got {records}+ records of an uncommitted batch",
            condition=_uncommitted_write(ctx, feed, watched_sink, baseline, records),
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


def until_trigger(scenario: Scenario, ctx: RunContext, stop: Any) -> Trigger | None:
    if scenario.expect.outcome != "continues" or not scenario.expect.until:
        return None
    offsets = {
        (ctx.topic(t), int(p)): int(o)
        for t, parts in scenario.expect.until.items()
        for p, o in parts.items()
    }
    return AtOffsets([stop], label="reached `until`", offsets=offsets)
