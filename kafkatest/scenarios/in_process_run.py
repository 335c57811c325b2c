"""Stream and batch scenarios: the job runs in this process, on the shared SparkSession.

A stream job's query is watched through a StreamingQueryListener (`ProgressFeed`);
actions can stop it and start it again on the same checkpoint.
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING, Any, cast

from kafkatest.jobs import load_job, start_job
from kafkatest.scenarios.context import RunContext
from kafkatest.scenarios.plan import Plan
from kafkatest.scenarios.result import JobRun
from kafkatest.scenarios.steps import build_trigger, fire_before_start, until_trigger
from kafkatest.scenarios.triggers import BeforeStart, Trigger
from kafkatest.scenarios.watch import ProgressFeed, TriggerWatch
from kafkatest.spark.errors import error_conditions
from kafkatest.spark.queries import stop_quietly

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery


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
