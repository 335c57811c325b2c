"""Run a `Scenario` against a broker: bind it (`plan`), seed, start the job in its mode
(`modes`), fire faults, judge the outcome (`result`)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafkatest._ground.tempdirs import owned_tempdir, remove
from kafkatest.brokers.base import Broker
from kafkatest.scenarios.context import RunContext
from kafkatest.scenarios.modes import run_batch, run_process, run_stream
from kafkatest.scenarios.plan import bind
from kafkatest.scenarios.result import ScenarioResult, judge
from kafkatest.scenarios.spec import Scenario

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


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
    plan = bind(scenario)
    ctx = RunContext(broker, plan.names, schema_registry=schema_registry)
    for topic, (partitions, config) in plan.topics.items():
        broker.create_topic(topic, partitions=partitions, config=config)
    scratch = None if checkpoint else owned_tempdir("kafkatest-checkpoint-")
    checkpoint = str(checkpoint or scratch)
    ctx.checkpoint = checkpoint
    try:
        for seed in plan.seeds:
            seed.run(ctx)  # the seed section: not an action of the log
        if scenario.mode == "process":
            run, triggers = run_process(plan, ctx, checkpoint)
        elif scenario.mode == "batch":
            run, triggers = run_batch(plan, ctx, _need(spark))
        else:
            run, triggers = run_stream(plan, ctx, _need(spark), checkpoint)
        result = ScenarioResult(
            scenario,
            broker.backend,
            dict(plan.names),
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
        for real in plan.topics:
            with contextlib.suppress(Exception):
                if broker.topic_exists(real):
                    broker.delete_topic(real)
        if scratch is not None:
            remove(scratch)


def _need(spark: SparkSession | None) -> SparkSession:
    if spark is None:
        raise ValueError("stream and batch scenarios run in this process: pass a SparkSession")
    return spark
