"""The job's run in each mode, and the triggers of its steps.

A stream or batch job runs in this process, on the shared SparkSession, watched through
a StreamingQueryListener (`ProgressFeed`); actions can stop its query and start it again
on the same checkpoint. A process job runs in its own process (`kafkatest.jobs`), watched
through its checkpoint, so that an action can kill it mid-batch and start it again.
"""

from __future__ import annotations

import contextlib
import functools
import time
from typing import TYPE_CHECKING, Any, cast

from kafkatest.errors import BrokerError
from kafkatest.jobs import JobOutcome, JobProcess, load_job, start_job
from kafkatest.scenarios.context import RunContext
from kafkatest.scenarios.plan import BoundStep, Plan
from kafkatest.scenarios.result import JobRun
from kafkatest.scenarios.triggers import (
    AfterBatch,
    AfterDelay,
    AtOffsets,
    BatchEvent,
    BeforeStart,
    CheckpointFeed,
    ProgressFeed,
    Trigger,
    TriggerWatch,
    WhenTrue,
)
from kafkatest.spark.errors import error_conditions
from kafkatest.spark.queries import stop_quietly

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery


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


class _QueryControl:
    """Actions' handle on the in-process query: stop it, or start the job again.

    A start reuses the checkpoint, so the new run resumes where the last one
    committed: how a test places a fault while the job is down.
    """

    def __init__(self, start_job: Any) -> None:
        self.start_job = start_job
        self.query: StreamingQuery | None = None
        self.stopped_by_harness = False

    def start(self) -> None:
        self.stopped_by_harness = False
        self.query = self.start_job()

    def stop(self) -> None:
        self.stopped_by_harness = True
        if self.query is not None:
            self.query.stop()

    def kill(self) -> None:
        raise ValueError("kill_job needs mode: process (the job in its own process)")

    def restart(self) -> None:
        self.stop()
        self.start()


def run_stream(
    plan: Plan, ctx: RunContext, spark: SparkSession, checkpoint: str
) -> tuple[JobRun, list[Trigger]]:
    job = load_job(plan.scenario.job)

    def start() -> StreamingQuery:
        return start_job(job, spark, ctx.broker, plan.source, plan.sink, checkpoint, plan.options)

    control = _QueryControl(start)
    ctx.job = control
    feed = ProgressFeed(spark)
    triggers = [build_trigger(step, ctx) for step in plan.steps]
    until = until_trigger(plan, control.stop)
    watch: TriggerWatch | None = None
    interrupted = False
    try:
        watched = fire_before_start(triggers) + ([until] if until else [])
        control.start()
        assert control.query is not None
        feed.query_id = str(control.query.id)
        watch = TriggerWatch(watched, feed.latest).start()
        run = _await_query(plan.scenario.timeout_s, control, watch)
    except KeyboardInterrupt:
        # Ctrl-C: stop the query, and let no py4j error from cleaning up replace the
        # interrupt (pytest must end the run as interrupted, not as a failed test).
        interrupted = True
        if control.query is not None:
            stop_quietly(control.query)
        raise
    finally:
        if watch is not None:
            watch.stop()
        with contextlib.suppress(Exception) if interrupted else contextlib.nullcontext():
            feed.close()
    return run, triggers


def _await_query(timeout_s: float, control: _QueryControl, watch: TriggerWatch) -> JobRun:
    """Wait for the query (or the one an action started in its place) to end."""
    deadline = time.monotonic() + timeout_s
    while True:
        query = control.query
        assert query is not None
        try:
            # PySpark takes fractional seconds (it sends milliseconds); its stub says int.
            ended = query.awaitTermination(cast(int, 0.2))
        except Exception as exc:  # the query's own failure: what the scenario is about
            if watch.acting or control.query is not query:
                continue  # an action stopped it and may start it again
            return _failed(exc)
        if watch.error is not None:
            query.stop()
            return JobRun("failed", "ActionError", f"a fault action failed: {watch.error!r}")
        if time.monotonic() > deadline:
            query.stop()
            return JobRun("timeout")
        if ended and not watch.acting and control.query is query and watch.settled():
            break
    error = query.exception()
    if error is not None:
        return _failed(error)
    return JobRun("stopped" if control.stopped_by_harness else "finished")


def _failed(exc: BaseException) -> JobRun:
    return JobRun("failed", type(exc).__name__, str(exc), tuple(error_conditions(exc)))


def run_batch(plan: Plan, ctx: RunContext, spark: SparkSession) -> tuple[JobRun, list[Trigger]]:
    triggers = [build_trigger(step, ctx) for step in plan.steps]
    for trigger in triggers:
        if not isinstance(trigger, BeforeStart):
            raise ValueError("a batch job can only have before_start faults")
        trigger.maybe_fire(None, time.monotonic())
    try:
        start_job(plan.scenario.job, spark, ctx.broker, plan.source, plan.sink, None, plan.options)
    except Exception as exc:
        return _failed(exc), triggers
    return JobRun("finished"), triggers


class _ProcessControl:
    """Actions' handle on a job process; remembers every process group it started."""

    def __init__(self, process: JobProcess, groups: list[int]) -> None:
        self.process = process
        self.groups = groups

    def kill(self) -> None:
        self.process.kill()

    def restart(self) -> None:
        self.process.kill()
        self.start()

    def start(self) -> None:
        self.process.start()
        if self.process.pid is not None:
            self.groups.append(self.process.pid)

    def stop(self) -> None:
        self.process.kill()


def run_process(plan: Plan, ctx: RunContext, checkpoint: str) -> tuple[JobRun, list[Trigger]]:
    if ctx.broker.security_runtime is not None:
        raise ValueError(
            "a job in its own process (mode: process) cannot be given a secured broker's "
            "options yet: run the scenario on a PLAINTEXT broker, or in-process"
        )
    timeout_s = plan.scenario.timeout_s
    bootstrap = ctx.broker.bootstrap_servers
    process = JobProcess(
        plan.scenario.job, bootstrap, plan.source, plan.sink, checkpoint, plan.options, timeout_s
    )
    control = _ProcessControl(process, ctx.process_groups)
    ctx.job = control
    feed = CheckpointFeed(checkpoint)
    baseline = sum(ctx.broker.latest_offsets(plan.sink).values())
    triggers = [build_trigger(step, ctx, feed, baseline) for step in plan.steps]
    watch: TriggerWatch | None = None
    with process:
        watched = fire_before_start(triggers)
        control.start()
        watch = TriggerWatch(watched, feed.latest).start()
        deadline = time.monotonic() + timeout_s * 2
        try:
            while time.monotonic() < deadline:
                if watch.error is not None:
                    return JobRun(
                        "failed", "ActionError", f"a fault action failed: {watch.error!r}"
                    ), triggers
                settled = not watch.acting and (watch.done or not process.running())
                if settled and not process.running():
                    break
                if settled and watch.done:
                    outcome = process.wait(max(1.0, deadline - time.monotonic()))
                    return _process_run(outcome), triggers
                time.sleep(0.1)
            else:
                return JobRun("timeout"), triggers
        finally:
            watch.stop()
        outcome = process.wait(5)
        return _process_run(outcome), triggers


def _process_run(outcome: JobOutcome) -> JobRun:
    return JobRun(outcome.status, outcome.error_class, outcome.error, outcome.conditions)
