"""The three oracles: a job's result must not depend on micro-batches, restarts or redelivery.

Each runs one job several ways over the same input, every run on its own source
topic, sink and checkpoint, and compares what the runs left in their sinks. None
needs an expected value: the job is its own reference, which is what lets a test
check an aggregation or a deduplication without working out its totals by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kafkatest.brokers.base import Broker
from kafkatest.brokers.capabilities import Capability
from kafkatest.oracles.compare import Tracer, explain, late_records, multiset_difference
from kafkatest.oracles.inputs import (
    InputRecord,
    Placement,
    copy_inputs,
    read_placement,
    seed_inputs,
)
from kafkatest.oracles.report import Comparison, OracleAssertionError, OracleReport
from kafkatest.oracles.runs import Job, OracleError, Runner, RunResult, StopPoint
from kafkatest.oracles.sinks import SinkReader, default_reader

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_TOLERANCE = 1e-9


class _Oracle:
    """What the three oracles share: seeding, running, reading sinks, comparing, reporting."""

    def __init__(
        self,
        name: str,
        job: Job,
        records: Iterable[Any] | str,
        *,
        spark: SparkSession | None,
        broker: Broker,
        partitions: int,
        sink: str,
        read_sink: SinkReader | None,
        tolerance: float,
        allow_late: bool,
        event_time: str | None,
        group_by: Sequence[str] | None,
        ignore: Sequence[str],
        seed_options: Mapping[str, Any] | None,
        process: bool,
        timeout_s: float,
        job_options: Mapping[str, str] | None,
    ) -> None:
        self.name = name
        self.broker = broker
        self.records = records
        self.seed_options = dict(seed_options or {})
        self.tolerance = tolerance
        self.allow_late = allow_late
        self.event_time = event_time
        self.group_by = group_by
        self.ignore = tuple(ignore)
        self.runner = Runner(
            job,
            spark=spark,
            broker=broker,
            partitions=partitions,
            sink=sink,
            process=process,
            timeout_s=timeout_s,
            job_options=job_options,
        )
        self.read_sink = read_sink or default_reader(sink, broker, spark)
        self.inputs: list[InputRecord] = []
        self.report = OracleReport(name, _job_name(job), 0, partitions)

    def __enter__(self) -> _Oracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.runner.close()

    def source(self, name: str, copies: int = 1) -> Placement:
        """A fresh source topic holding the input (`copies` times); the first one seeds it."""
        topic = self.runner.new_topic(name, self.runner.partitions)
        if not self.inputs:
            self.inputs, placement = seed_inputs(
                self.broker, topic, self.records, self.seed_options
            )
            self.report.inputs = len(self.inputs)
            if copies == 1:
                return placement
            topic = self.runner.new_topic(name, self.runner.partitions)
        return copy_inputs(self.broker, topic, self.inputs, copies)

    def run(
        self,
        name: str,
        placement: Placement,
        max_offsets_per_trigger: int | None,
        stop: StopPoint | None = None,
    ) -> RunResult:
        result, sink = self.runner.run(name, placement.topic, max_offsets_per_trigger, stop)
        result.placement = placement.at
        result.rows = [_without(row, self.ignore) for row in self.read_sink(sink)]
        self.report.runs.append(result)
        return result

    def compare(self, baseline: RunResult, other: RunResult, duplicates: str) -> Comparison:
        only_base, only_other, matched = multiset_difference(
            baseline.rows, other.rows, self.tolerance, duplicates=duplicates
        )
        comparison = Comparison(
            baseline.name, other.name, duplicates, matched, allow_late=self.allow_late
        )
        if only_base or only_other:
            event_time = self.event_time or baseline.watermark_column or other.watermark_column
            tracer = Tracer(self.inputs, event_time, self.group_by)
            late = late_records(tracer, [baseline, other])
            comparison.late = list(late.values())
            comparison.only_in_baseline = explain(tracer, only_base, baseline.name, late)
            comparison.only_in_other = explain(tracer, only_other, other.name, late)
        self.report.comparisons.append(comparison)
        return comparison

    def verdict(self) -> OracleReport:
        if not self.report.ok:
            raise OracleAssertionError(self.report)
        return self.report


def assert_split_invariant(
    job: Job,
    records: Iterable[Any] | str,
    *,
    spark: SparkSession | None = None,
    broker: Broker,
    splits: Sequence[int | None] = (None, 1, 7),
    partitions: int = 3,
    sink: str = "topic",
    read_sink: SinkReader | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    allow_late: bool = False,
    event_time: str | None = None,
    group_by: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    seed_options: Mapping[str, Any] | None = None,
    process: bool = False,
    timeout_s: float = 180.0,
    job_options: Mapping[str, str] | None = None,
) -> OracleReport:
    """The job's final sink is the same however its input is cut into micro-batches.

    Each split is one run to completion under ``Trigger.AvailableNow``: None reads
    everything in one batch, n sets ``maxOffsetsPerTrigger=n``. State kept per batch
    instead of across batches (a ``foreachBatch`` that deduplicates or aggregates
    within its batch) fails here; so does late data dropped depending on where a
    batch boundary fell, reported with the late records and each run's watermarks
    (``allow_late=True`` accepts differences wholly explained by them).

    `records` is what `seed` accepts (`seed_options` are passed on to it: key_field,
    id_field, ...). `event_time` names the value field the job's watermark is on
    (found in the job's plan when not given; ``"timestamp"`` is the Kafka timestamp);
    `group_by` the fields that tie a sink row to its input records (default: the
    fields sink rows and inputs share); `ignore` columns that differ between any two
    runs (processing time, batch ids). `process=True` runs the job in its own process.
    Returns the `OracleReport`; raises `OracleAssertionError` (an AssertionError) on a
    difference.
    """
    if not splits or len(splits) < 2:
        raise ValueError("splits: give at least two, e.g. (None, 1, 7)")
    with _oracle("split invariance", job, records, locals()) as oracle:
        runs = []
        for split in splits:
            name = "one batch" if split is None else f"maxOffsetsPerTrigger={split}"
            runs.append(oracle.run(name, oracle.source(name), split))
        for other in runs[1:]:
            oracle.compare(runs[0], other, "forbid")
        return oracle.verdict()


def assert_restart_invariant(
    job: Job,
    records: Iterable[Any] | str,
    *,
    spark: SparkSession | None = None,
    broker: Broker,
    stops: Sequence[str] = ("after_batch:1", "crash_before_commit:2"),
    max_offsets_per_trigger: int | None = None,
    partitions: int = 3,
    sink: str = "topic",
    read_sink: SinkReader | None = None,
    duplicates: str = "forbid",
    tolerance: float = DEFAULT_TOLERANCE,
    allow_late: bool = False,
    event_time: str | None = None,
    group_by: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    seed_options: Mapping[str, Any] | None = None,
    process: bool = False,
    timeout_s: float = 180.0,
    job_options: Mapping[str, str] | None = None,
) -> OracleReport:
    """Stopping the job and resuming it from its checkpoint leaves the same sink.

    The job runs uninterrupted once, and once per stop: ``after_batch:n`` stops it
    cleanly after batch n commits; ``crash_before_commit:n`` kills its query after
    batch n's sink write and before its commit, so the resumed query replays batch n,
    as after a driver crash in that window. A ``foreachBatch`` that appends without
    using the batch id writes the replayed batch twice and fails here.
    ``duplicates="allow"`` is for sinks at-least-once by design (Kafka): the resumed
    run must then have every row of the uninterrupted one and nothing else.
    `max_offsets_per_trigger` cuts the input into batches (default: enough batches
    to reach the latest stop); the other parameters are as for `assert_split_invariant`.
    """
    points = [StopPoint.parse(text) for text in stops]
    if not points:
        raise ValueError("stops: give at least one, e.g. ('after_batch:1',)")
    with _oracle("restart invariance", job, records, locals()) as oracle:
        first = oracle.source("uninterrupted")
        limit = max_offsets_per_trigger or _limit_for(
            len(oracle.inputs), max(p.batch for p in points)
        )
        baseline = oracle.run("uninterrupted", first, limit)
        for point in points:
            other = oracle.run(str(point), oracle.source(str(point)), limit, stop=point)
            oracle.compare(baseline, other, duplicates)
        return oracle.verdict()


def assert_redelivery_invariant(
    job: Job,
    records: Iterable[Any] | str,
    *,
    spark: SparkSession | None = None,
    broker: Broker,
    copies: int = 2,
    lost_acks: bool = True,
    max_offsets_per_trigger: int | None = None,
    partitions: int = 3,
    sink: str = "topic",
    read_sink: SinkReader | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    allow_late: bool = False,
    event_time: str | None = None,
    group_by: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    seed_options: Mapping[str, Any] | None = None,
    process: bool = False,
    timeout_s: float = 180.0,
    job_options: Mapping[str, str] | None = None,
) -> OracleReport:
    """Records delivered more than once (a producer's retry) leave the sink unchanged.

    The job reads the records once, then each record `copies` times, as a retry
    after a lost acknowledgement leaves them: same key, value, headers and timestamp,
    at later offsets of the same partition (every record, then the copies). With
    `lost_acks` and a backend that can lose a produce acknowledgement (the emulator),
    a third run reads duplicates the broker's fault made; on other backends the
    report says that run was left out. `max_offsets_per_trigger` defaults to the
    number of records, so copies arrive in a later micro-batch than their originals,
    where deduplication kept only within a batch lets them through.
    """
    if copies < 2:
        raise ValueError(f"copies must be 2 or more, not {copies}")
    with _oracle("redelivery invariance", job, records, locals()) as oracle:
        once = oracle.source("once")
        limit = max_offsets_per_trigger or max(1, len(oracle.inputs))
        baseline = oracle.run("once", once, limit)
        name = f"copies={copies}"
        oracle.compare(baseline, oracle.run(name, oracle.source(name, copies), limit), "forbid")
        if lost_acks and broker.can(Capability.REQUEST_HOOKS):
            placement = _lost_ack_source(oracle)
            if placement.copies() == 0:
                oracle.report.notes.append("the lost-ack fault duplicated no record")
            else:
                lost = oracle.run("lost acks", placement, limit)
                oracle.compare(baseline, lost, "forbid")
        elif lost_acks:
            oracle.report.notes.append(
                f"no lost-ack run: the {broker.backend!r} backend cannot lose a produce "
                "acknowledgement (the emulator can)"
            )
        return oracle.verdict()


def _lost_ack_source(oracle: _Oracle) -> Placement:
    """A topic written by a producer without idempotence whose first acknowledgement the
    broker loses: the producer retries, and the broker keeps both copies."""
    from confluent_kafka import Producer

    from kafkatest.faults import faults_for

    topic = oracle.runner.new_topic("lost-acks", oracle.runner.partitions)
    faults = faults_for(oracle.broker)
    fault = faults.lose_produce_acks(times=1, topic=topic)
    try:
        producer = Producer(
            {
                **oracle.broker.client_config(),
                "enable.idempotence": False,
                "linger.ms": 50,
                "message.timeout.ms": 60000,
            }
        )
        for item in oracle.inputs:
            record = item.record
            producer.produce(
                topic,
                value=record.value,
                key=record.key,
                headers=list(record.headers) or None,
                partition=item.partition,
                timestamp=record.timestamp_ms or 0,
            )
        if producer.flush(60):
            raise OracleError("the lost-ack run's records were not all acknowledged in 60s")
    finally:
        faults.remove(fault)
    return read_placement(oracle.broker, topic, oracle.inputs)


def _oracle(name: str, job: Job, records: Iterable[Any] | str, given: dict[str, Any]) -> _Oracle:
    keys = (
        "spark",
        "broker",
        "partitions",
        "sink",
        "read_sink",
        "tolerance",
        "allow_late",
        "event_time",
        "group_by",
        "ignore",
        "seed_options",
        "process",
        "timeout_s",
        "job_options",
    )
    return _Oracle(name, job, records, **{k: given[k] for k in keys})


def _limit_for(records: int, last_stop: int) -> int:
    """A batch size that gives at least two batches more than the latest stop needs."""
    return max(1, records // (last_stop + 3))


def _without(row: dict[str, Any], ignore: Sequence[str]) -> dict[str, Any]:
    """`row` minus the `ignore`d columns (``a.b`` reaches into a struct or JSON value)."""
    if not ignore:
        return row
    out = dict(row)
    for path in ignore:
        head, _, rest = path.partition(".")
        if rest and isinstance(out.get(head), dict):
            out[head] = _without(out[head], [rest])
        elif not rest:
            out.pop(head, None)
        elif isinstance(out.get("value"), dict):
            out["value"] = _without(out["value"], [path])
    return out


def _job_name(job: Job | Callable[..., Any]) -> str:
    if isinstance(job, str):
        return job
    return f"{getattr(job, '__module__', '?')}:{getattr(job, '__qualname__', repr(job))}"
