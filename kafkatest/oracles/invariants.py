"""The three oracles: a job's result must not depend on micro-batches, restarts or redelivery.

Each runs one job several ways over the same input, every run on its own source
topic, sink and checkpoint, and compares what the runs left in their sinks. None
needs an expected value: the job is its own reference, which is what lets a test
check an aggregation or a deduplication without working out its totals by hand.
What they share (`**options` below) is declared once, in `OracleOptions`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from typing_extensions import Unpack

from kafkatest.brokers.capabilities import Capability
from kafkatest.oracles.batches import needed_batches
from kafkatest.oracles.engine import Oracle
from kafkatest.oracles.inputs import Placement, read_placement
from kafkatest.oracles.options import OracleKeywords, OracleOptions, check_copies, check_duplicates
from kafkatest.oracles.report import OracleReport
from kafkatest.oracles.runs import Job, OracleError, RunResult
from kafkatest.oracles.stops import StopPoint


def assert_split_invariant(
    job: Job,
    records: Iterable[Any] | str,
    *,
    splits: Sequence[int | None] = (None, 1, 7),
    **options: Unpack[OracleKeywords],
) -> OracleReport:
    """The job's final sink is the same however its input is cut into micro-batches.

    Each split is one run to completion under ``Trigger.AvailableNow``: None reads
    everything in one batch, n sets ``maxOffsetsPerTrigger=n``. State kept per batch
    instead of across batches (a ``foreachBatch`` that deduplicates or aggregates
    within its batch) fails here; so does late data dropped depending on where a
    batch boundary fell, reported with the late records and each run's watermarks
    (``allow_late=True`` accepts differences those records explain: a row missing, or
    smaller by what they held; never one that grew or appeared).

    `records` is what `seed` accepts. The options (`OracleOptions`) say how the job
    runs and how its sink is read: ``sink="topic"`` (default), ``"path"`` or
    ``"memory"``; ``output_mode`` read from the query unless given. Returns the
    `OracleReport`; raises `OracleAssertionError` (an AssertionError) on a difference.
    """
    settings = OracleOptions.of("assert_split_invariant", options)
    if not splits or len(splits) < 2:
        raise ValueError("splits: give at least two, e.g. (None, 1, 7)")
    for split in splits:
        if split is not None and (
            isinstance(split, bool) or not isinstance(split, int) or split < 1
        ):
            raise ValueError(f"splits: each is None or a number of records >= 1, not {split!r}")
    with Oracle("split invariance", job, records, settings) as oracle:
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
    stops: Sequence[str] = ("after_batch:1", "crash_before_commit:2"),
    max_offsets_per_trigger: int | None = None,
    duplicates: str | None = None,
    **options: Unpack[OracleKeywords],
) -> OracleReport:
    """Stopping the job and resuming it from its checkpoint leaves the same sink.

    The job runs uninterrupted once, and once per stop: ``after_batch:n`` stops it
    cleanly after batch n commits; ``crash_before_commit:n`` kills its query after
    batch n's sink write and before its commit, so the resumed query replays batch n,
    as after a driver crash in that window. A ``foreachBatch`` that appends without
    using the batch id writes the replayed batch twice and fails here.

    `duplicates`: None (default) lets a Kafka sink in append mode, at-least-once by
    design, hold exactly the rows the replayed batch wrote a second time and nothing
    else ("replayed"); other sinks must hold the same rows ("forbid"); "allow"
    compares distinct rows only. `max_offsets_per_trigger` cuts the input into
    batches: by default the oracle works out (as Spark's rate limit will) a limit that
    reaches every stop, placing the input in fewer partitions if it must, and refuses
    before running when no limit can.
    """
    settings = OracleOptions.of("assert_restart_invariant", options)
    points = [StopPoint.parse(text) for text in stops]
    if not points:
        raise ValueError("stops: give at least one, e.g. ('after_batch:1',)")
    check_duplicates(duplicates)
    with Oracle("restart invariance", job, records, settings) as oracle:
        need = needed_batches([(p.kind, p.batch) for p in points])
        limit = oracle.limit_reaching(
            need, max_offsets_per_trigger, f"stop {max(points, key=lambda p: p.batch)}"
        )
        baseline = oracle.run("uninterrupted", oracle.source("uninterrupted"), limit)
        policy = duplicates or replay_policy(oracle)
        for point in points:
            other = oracle.run(str(point), oracle.source(str(point)), limit, [point])
            oracle.compare(baseline, other, policy)
        return oracle.verdict()


def assert_redelivery_invariant(
    job: Job,
    records: Iterable[Any] | str,
    *,
    copies: int = 2,
    lost_acks: bool = True,
    max_offsets_per_trigger: int | None = None,
    expect_dedup: bool | None = None,
    **options: Unpack[OracleKeywords],
) -> OracleReport:
    """Records delivered more than once (a producer's retry) leave the sink unchanged.

    It applies to a job that can tell a copy from a new record: one whose plan
    deduplicates, keeps state of its own, or runs code kafkatest cannot see into
    (``foreachBatch``, ``mapInPandas``, ``applyInPandas``). A job with none of those (a
    word count, a projection) counts every copy as input, by design: the report says
    "not applicable" and nothing is compared. `expect_dedup=True` holds any job to it
    (it must absorb copies), `expect_dedup=False` none.

    The job reads the records once, then each record `copies` times, as a retry
    after a lost acknowledgement leaves them: same key, value, headers and timestamp,
    at later offsets of the same partition (every record, then the copies). With
    `lost_acks` and a backend that can lose a produce acknowledgement (the emulator),
    a third run reads duplicates the broker's fault made; on other backends the
    report says that run was left out. `max_offsets_per_trigger` defaults to the
    number of records, so copies arrive in a later micro-batch than their originals,
    where deduplication kept only within a batch lets them through.
    """
    settings = OracleOptions.of("assert_redelivery_invariant", options)
    check_copies(copies)
    with Oracle("redelivery invariance", job, records, settings) as oracle:
        once = oracle.source("once")
        limit = max_offsets_per_trigger or max(1, len(oracle.inputs))
        baseline = oracle.run("once", once, limit)
        oracle.report.not_applicable = redelivery_applies(baseline, expect_dedup)
        if oracle.report.not_applicable:
            return oracle.verdict()
        name = f"copies={copies}"
        oracle.compare(baseline, oracle.run(name, oracle.source(name, copies), limit), "forbid")
        redeliver_through_lost_acks(oracle, baseline, limit, lost_acks)
        return oracle.verdict()


def redeliver_through_lost_acks(
    oracle: Oracle, baseline: Any, limit: int | None, wanted: bool
) -> None:
    """The lost-ack run, where the backend can lose an acknowledgement (and it is wanted)."""
    broker = oracle.options.broker
    if wanted and broker.can(Capability.REQUEST_HOOKS):
        placement = lost_ack_source(oracle)
        if placement.copies() == 0:
            oracle.report.notes.append("the lost-ack fault duplicated no record")
        else:
            oracle.compare(baseline, oracle.run("lost acks", placement, limit), "forbid")
    elif wanted:
        oracle.report.notes.append(
            f"no lost-ack run: the {broker.backend!r} backend cannot lose a produce "
            "acknowledgement (the emulator can)"
        )


def redelivery_applies(baseline: RunResult, expect_dedup: bool | None) -> str:
    """'' when the redelivery oracle applies to the job, else why not."""
    if expect_dedup is not None:
        return "" if expect_dedup else "expect_dedup=False: copies are input to the job by design"
    plan = baseline.plan
    if plan is None or plan.tells_copies_apart is not None:
        return ""
    return (
        "nothing in the job's plan can tell a copy of a record from a new one (no "
        "deduplication, no state of its own, no foreachBatch or pandas code), so every "
        "copy is input to it by design; expect_dedup=True holds it to redelivery anyway"
    )


def replay_policy(oracle: Oracle) -> str:
    """What a restart's sink may hold twice when the caller did not say: a Kafka sink
    in append mode read by the oracle holds the replayed batch's rows twice (the
    connector's sink is at-least-once), anything else the same rows."""
    plain = oracle.options.sink == "topic" and oracle.options.read_sink is None
    return "replayed" if plain and oracle.output_mode == "append" else "forbid"


def lost_ack_source(oracle: Oracle) -> Placement:
    """A topic written by a producer without idempotence whose first acknowledgement the
    broker loses: the producer retries, and the broker keeps both copies."""
    from confluent_kafka import Producer

    from kafkatest.faults import faults_for

    broker = oracle.options.broker
    topic = oracle.runner.new_topic("lost-acks", oracle.partitions)
    faults = faults_for(broker)
    fault = faults.lose_produce_acks(times=1, topic=topic)
    try:
        producer = Producer(
            {
                **broker.client_config(),
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
    return read_placement(broker, topic, oracle.inputs)
