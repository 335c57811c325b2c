"""Run a `Scenario` against a broker: seed, start the job, fire faults, judge the outcome.

A stream scenario runs the job's query in this process (the shared SparkSession)
and watches it through a StreamingQueryListener; a process scenario runs the job
in its own process and watches its checkpoint, so it can be killed and restarted.
"""

from __future__ import annotations

import contextlib
import re
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from kafkatest.brokers.base import Broker
from kafkatest.errors import BrokerError
from kafkatest.scenarios.actions import RunContext, make_action, seed_records
from kafkatest.scenarios.events import BatchEvent
from kafkatest.scenarios.judge import judge
from kafkatest.scenarios.loading import load_job
from kafkatest.scenarios.process import JobOutcome, JobProcess
from kafkatest.scenarios.result import JobRun, ScenarioResult
from kafkatest.scenarios.spec import Scenario, Step
from kafkatest.scenarios.triggers import (
    AfterBatch,
    AfterDelay,
    AtOffsets,
    BeforeStart,
    Trigger,
    WhenTrue,
)
from kafkatest.scenarios.watch import CheckpointFeed, ProgressFeed, TriggerWatch
from kafkatest.spark.errors import error_conditions
from kafkatest.spark.queries import stop_quietly
from kafkatest.tempdirs import owned_tempdir, remove

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery


def real_topic_names(scenario: Scenario) -> dict[str, str]:
    """Unique topic names for this run, readable in broker logs."""
    slug = re.sub(r"[^A-Za-z0-9-]+", "-", scenario.name)[:40].strip("-") or "scenario"
    run = uuid.uuid4().hex[:6]
    return {logical: f"kt-{slug}-{logical}-{run}" for logical in scenario.topics}


def resolved_options(scenario: Scenario, names: dict[str, str]) -> dict[str, str]:
    """Option values with ``{topic}`` replaced by the real name.

    Real names hold only letters, digits, ``.``, ``_`` and ``-``, so they read the
    same inside a ``subscribePattern`` regex and inside ``endingOffsets`` JSON.
    """
    out = {}
    for key, value in scenario.options.items():
        for logical, real in names.items():
            value = value.replace("{" + logical + "}", real)
        out[key] = value
    return out


def run_scenario(
    scenario: Scenario,
    broker: Broker,
    spark: SparkSession | None = None,
    checkpoint: str | Path | None = None,
    schema_registry: Any = None,
) -> ScenarioResult:
    """Run `scenario` once; never raises for Spark's or the sink's behaviour, only reports.

    `schema_registry` (a URL or the fixture) serves the register_schema / evolve_schema
    actions; seeds to a topic with a schema are then Avro in Confluent's wire format.
    """
    names = real_topic_names(scenario)
    ctx = RunContext(broker, names, schema_registry=schema_registry)
    for logical, partitions in scenario.topics.items():
        broker.create_topic(names[logical], partitions=partitions)
    scratch = None if checkpoint else owned_tempdir("kafkatest-checkpoint-")
    checkpoint = str(checkpoint or scratch)
    try:
        for spec in scenario.seed:
            seed_records(ctx, spec)
        if scenario.mode == "process":
            run, triggers = _run_process(scenario, ctx, checkpoint)
        elif scenario.mode == "batch":
            run, triggers = _run_batch(scenario, ctx, _need(spark))
        else:
            run, triggers = _run_stream(scenario, ctx, _need(spark), checkpoint)
        result = ScenarioResult(
            scenario,
            broker.backend,
            dict(names),
            run,
            [t.firing for t in triggers if t.firing is not None],
            list(ctx.log),
            process_groups=list(ctx.process_groups),
        )
        for trigger in triggers:
            if trigger.firing is None:
                result.problems.append(f"trigger {trigger.describe()!r} never fired")
        judge(result, ctx)
        return result
    finally:
        for real in names.values():
            with contextlib.suppress(Exception):
                if broker.topic_exists(real):
                    broker.delete_topic(real)
        if scratch is not None:
            remove(scratch)


def _need(spark: SparkSession | None) -> SparkSession:
    if spark is None:
        raise ValueError("stream and batch scenarios run in this process: pass a SparkSession")
    return spark


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


def _until_trigger(scenario: Scenario, ctx: RunContext, stop: Any) -> Trigger | None:
    if scenario.expect.outcome != "continues" or not scenario.expect.until:
        return None
    offsets = {
        (ctx.topic(t), int(p)): int(o)
        for t, parts in scenario.expect.until.items()
        for p, o in parts.items()
    }
    return AtOffsets([stop], label="reached `until`", offsets=offsets)


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


def _run_stream(
    scenario: Scenario, ctx: RunContext, spark: SparkSession, checkpoint: str
) -> tuple[JobRun, list[Trigger]]:
    job = load_job(scenario.job)

    def start_job() -> StreamingQuery:
        return job(
            spark,
            ctx.broker.bootstrap_servers,
            ctx.topic(scenario.source),
            ctx.topic(scenario.sink),
            checkpoint,
            options=resolved_options(scenario, ctx.names),
            **_security(ctx.broker),
        )

    control = _QueryControl(start_job)
    ctx.job = control
    feed = ProgressFeed(spark)
    triggers = [build_trigger(s, ctx) for s in scenario.steps]
    until = _until_trigger(scenario, ctx, control.stop)
    watched = [t for t in triggers if not isinstance(t, BeforeStart)] + ([until] if until else [])
    watch: TriggerWatch | None = None
    interrupted = False
    try:
        for trigger in triggers:
            if isinstance(trigger, BeforeStart):
                trigger.maybe_fire(None, time.monotonic())
        control.start()
        assert control.query is not None
        feed.query_id = str(control.query.id)
        watch = TriggerWatch(watched, feed.latest).start()
        run = _await_query(scenario.timeout_s, control, watch)
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


def _run_batch(
    scenario: Scenario, ctx: RunContext, spark: SparkSession
) -> tuple[JobRun, list[Trigger]]:
    triggers = [build_trigger(s, ctx) for s in scenario.steps]
    for trigger in triggers:
        if not isinstance(trigger, BeforeStart):
            raise ValueError("a batch job can only have before_start faults")
        trigger.maybe_fire(None, time.monotonic())
    job = load_job(scenario.job)
    try:
        job(
            spark,
            ctx.broker.bootstrap_servers,
            ctx.topic(scenario.source),
            ctx.topic(scenario.sink),
            options=resolved_options(scenario, ctx.names),
            **_security(ctx.broker),
        )
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


def _security(broker: Broker) -> dict[str, dict[str, str]]:
    """A secured broker's options for the job (its admin login), as ``kafka_options``;
    nothing on PLAINTEXT, so jobs without that parameter keep working."""
    if broker.security_runtime is None:
        return {}
    options = broker.spark_options()
    options.pop("kafka.bootstrap.servers")
    return {"kafka_options": options}


def _run_process(
    scenario: Scenario, ctx: RunContext, checkpoint: str
) -> tuple[JobRun, list[Trigger]]:
    if ctx.broker.security_runtime is not None:
        raise ValueError(
            "a job in its own process (mode: process) cannot be given a secured broker's "
            "options yet: run the scenario on a PLAINTEXT broker, or in-process"
        )
    sink = ctx.topic(scenario.sink)
    process = JobProcess(
        scenario.job,
        ctx.broker.bootstrap_servers,
        ctx.topic(scenario.source),
        sink,
        checkpoint,
        resolved_options(scenario, ctx.names),
        timeout_s=scenario.timeout_s,
    )
    control = _ProcessControl(process, ctx.process_groups)
    ctx.job = control
    feed = CheckpointFeed(checkpoint)
    baseline = sum(ctx.broker.latest_offsets(sink).values())
    triggers = [build_trigger(s, ctx, feed, baseline, scenario.sink) for s in scenario.steps]
    watch: TriggerWatch | None = None
    with process:
        for trigger in triggers:
            if isinstance(trigger, BeforeStart):
                trigger.maybe_fire(None, time.monotonic())
        control.start()
        watch = TriggerWatch([t for t in triggers if not isinstance(t, BeforeStart)], feed.latest)
        watch.start()
        deadline = time.monotonic() + scenario.timeout_s * 2
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
