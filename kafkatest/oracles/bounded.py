"""The bounded-state oracle: a streaming job's state must level off as event time
moves on, not grow with the stream.

A ``dropDuplicates`` or a stream-stream join without a usable watermark writes the
right rows while keeping every key it ever saw; the job dies weeks later of memory or
of state-store commits that take an hour. The output oracles cannot see it. This one
runs the job batch by batch over a stream whose event time moves forward, reads each
stateful operator's rows after every batch from Spark's progress (on every line and
over Spark Connect), and fails an operator whose rows, after a warm-up, rise above
the most they held during it.

The verdict, per operator, on the rows held when each batch ended (its evictions
done): ``max(rows[warmup:]) > max(rows[:warmup])`` fails. Why that criterion:

- State that keeps every key only ever grows, by the keys each batch brings that it
  had not seen: with new keys in every batch it sets a new high with every batch, so
  it fails whatever the warm-up.
- State a watermark bounds holds the rows within the watermark's horizon (its delay,
  plus a window's length or a join's time range) behind the latest event time. With
  batches alike (the same number of records, each batch's event times those of the
  one before moved by the same step) and a horizon of h batches, the rows held stop
  changing from batch h on; from then on every batch holds what the one before held.
  So a job passes when h < warmup, with no timing involved: Spark runs each batch's
  eviction (a no-data batch when the watermark moved) before the query ends.

The oracle checks what it can of that: every batch holds the same number of records
(else it refuses), the stream reached every stateful operator. The horizon is the
caller's part: move event time per batch by at least the horizon divided by
``warmup - 1`` (with the default 8 batches, a warm-up of 4: a third of it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

from typing_extensions import Unpack

from kafkatest.jobs import job_name
from kafkatest.oracles.options import OracleKeywords, OracleOptions
from kafkatest.oracles.runs import Job, OracleError, Runner, RunResult
from kafkatest.oracles.state_report import (
    Leg,
    OperatorState,
    StateAssertionError,
    StateReport,
    grows,
)
from kafkatest.state.operators import planned_operators, rows_total, state_operators

BatchRecords = Callable[[int], Iterable[Any]]


def assert_state_bounded(
    job: Job,
    batch_records: BatchRecords,
    *,
    batches: int = 8,
    warmup: int | None = None,
    sample: int = 5,
    **options: Unpack[OracleKeywords],
) -> StateReport:
    """The job's state levels off as event time moves on instead of growing with the
    stream.

    `batch_records(i)` gives the records of batch i (what `seed` accepts), the same
    number for every i, with new keys and event times moved forward from batch to
    batch. For each batch the records are seeded into the job's source topic and the
    job runs once more on its one checkpoint under ``Trigger.AvailableNow``: one batch
    (and the no-data batch that evicts what the watermark passed). After each batch
    every stateful operator's rows are read from Spark's progress
    (``stateOperators[].numRowsTotal``).

    An operator fails when, after the first `warmup` batches (default: half), it holds
    more rows than the most it held during them. The report names the operator (its
    Spark name, the plan's node and operator id), its rows after each batch, what
    the plan says about evicting it, and, where Spark reads state (4.0+), a sample of
    `sample` rows held at the end of the warm-up and never evicted. A query with no
    stateful operator is reported *not applicable*.

    Takes the oracles' options (`OracleOptions`): ``spark``, ``broker``,
    ``partitions`` (default 3), ``sink``, ``seed_options``, ``timeout_s``,
    ``job_options``; those about comparing sinks have no effect here. Raises
    `StateAssertionError` (an AssertionError) when state grows; returns the
    `StateReport`.
    """
    settings = OracleOptions.of("assert_state_bounded", options)
    if settings.process:
        raise ValueError(
            "assert_state_bounded reads the query's progress after each batch, which a job "
            "in its own process does not give: drop process=True"
        )
    if isinstance(batches, bool) or not isinstance(batches, int) or not 4 <= batches <= 100:
        raise ValueError(f"batches must be 4 to 100, not {batches!r}")
    warm = batches // 2 if warmup is None else warmup
    if isinstance(warm, bool) or not isinstance(warm, int) or not 2 <= warm <= batches - 2:
        raise ValueError(
            f"warmup must be 2 to batches - 2 ({batches - 2}): at least two batches on "
            f"each side of it, not {warmup!r}"
        )
    if not callable(batch_records):
        raise TypeError(
            "batch_records must be a function of the batch index that returns its records, "
            f"not {type(batch_records).__name__}: e.g. lambda i: [record(i, j) for j in range(5)]"
        )
    inputs = [_listed(batch_records(index)) for index in range(batches)]
    _check_alike([len(batch) for batch in inputs if isinstance(batch, list)])
    runner = Runner(job, settings)
    report = StateReport(job_name(job), batches, warm, partitions=settings.source_partitions)
    try:
        checkpoint = _run(runner, settings, inputs, report)
        if report.not_applicable or report.ok:
            return report
        _read_kept(settings, checkpoint, report, sample)
    finally:
        runner.close()
    raise StateAssertionError(report)


def _listed(records: Iterable[Any] | str) -> list[Any] | str:
    """A batch's records as a list (a fixture file's path stays a path)."""
    if isinstance(records, (str, PathLike)):
        return str(records)
    return list(records)


def _check_alike(sizes: list[int]) -> None:
    """Every batch must hold the same number of records (and some)."""
    if sizes and (min(sizes) == 0 or len(set(sizes)) > 1):
        raise OracleError(
            f"batch_records gave {', '.join(map(str, sizes))} records for batches 0 to "
            f"{len(sizes) - 1}: the oracle compares the state's rows between batches, which "
            "says something only when the batches are alike: give each the same number of "
            "records (new keys, event time moved forward)"
        )


def _run(
    runner: Runner, settings: OracleOptions, inputs: list[list[Any] | str], report: StateReport
) -> Path:
    """Seed and run each batch in turn; fill `report` with what the progress showed."""
    from kafkatest.seeding import seed

    source = runner.new_topic("input", settings.source_partitions)
    sink = runner.sink_target("state")
    checkpoint = runner.new_dir("kafkatest-oracle-checkpoint-") / "checkpoint"
    result = RunResult("batch by batch", {}, sink=sink)
    seed_options = {"duplicates": "allow", **(settings.seed_options or {})}
    sizes: list[int] = []
    for index, records in enumerate(inputs):
        sizes.append(len(seed(settings.broker, source, records, **seed_options).records))
        _check_alike(sizes)
        report.records_per_batch = sizes[0]
        runner.resume(source, sink, checkpoint, result)
        reports = result.leg_reports[-1]
        if not reports:
            raise OracleError(
                f"batch {index}: the query ended without a progress report (it ran no "
                "batch, or its session went away)"
            )
        report.legs.append(_leg(index, reports))
        if index == 0 and not any(state_operators(r) for r in reports):
            report.not_applicable = "the query keeps no state (no stateful operator in its plan)"
            break
    report.seconds = result.seconds
    if not report.not_applicable:
        report.operators = _operators(result, report.warmup)
    return checkpoint


def _leg(index: int, reports: Sequence[Mapping[str, Any]]) -> Leg:
    marks = [(r.get("eventTime") or {}) for r in reports]
    latest = [m["max"] for m in marks if m.get("max")]
    return Leg(
        index,
        [int(r.get("batchId", -1)) for r in reports],
        sum(int(r.get("numInputRows", 0) or 0) for r in reports),
        watermark=str(marks[-1].get("watermark") or ""),
        event_time_max=max(latest) if latest else "",
    )


def _operators(result: RunResult, warmup: int) -> list[OperatorState]:
    planned = planned_operators(result.plan.text if result.plan is not None else "")
    count = max(len(state_operators(r)) for leg in result.leg_reports for r in leg)
    out = []
    for position in range(count):
        names = [
            str(state_operators(r)[position].get("operatorName", "?"))
            for r in result.leg_reports[-1]
            if position < len(state_operators(r))
        ]
        op = OperatorState(position, names[-1] if names else "?")
        if position < len(planned) and len(planned) == count:
            op.node, op.op_id = planned[position].node, planned[position].op_id
            op.eviction = planned[position].eviction()
        for leg in result.leg_reports:
            totals = rows_total(leg, position)
            if min(totals) < 0:
                raise OracleError(
                    f"operator {position} ({op.name}): a progress report gave no numRowsTotal"
                )
            op.rows.append(totals[-1])
            op.peaks.append(max(totals))
            op.removed.append(
                sum(
                    int(state_operators(r)[position].get("numRowsRemoved", 0) or 0)
                    for r in leg
                    if position < len(state_operators(r))
                )
            )
        op.grows = grows(op.rows, warmup)
        out.append(op)
    return out


def _read_kept(settings: OracleOptions, checkpoint: Path, report: StateReport, sample: int) -> None:
    """For each growing operator, the rows held at the end of the warm-up that are
    still held at the end: read from the state store where the line has the reader."""
    from kafkatest.state import StateReadError, reader_refusal, state_metadata
    from kafkatest.state.reader import read_state

    spark = settings.spark
    assert spark is not None
    refusal = reader_refusal(spark)
    start = report.legs[report.warmup - 1].batch_ids[-1]
    end = report.legs[-1].batch_ids[-1]
    variables: dict[int, str] = {}
    if not refusal:
        for entry in state_metadata(spark, checkpoint):
            found = [
                v["stateName"]
                for v in entry["operatorProperties"].get("stateVariables", [])
                if not str(v["stateName"]).startswith("$")
            ]
            if found:
                variables[int(entry["operatorId"])] = found[0]
    for op in report.operators:
        if not op.grows:
            continue
        if refusal or op.op_id is None:
            op.kept_unread = refusal or "the operator's id was not found in the plan"
            continue
        try:
            options: dict[str, Any] = {"operator_id": op.op_id}
            if op.op_id in variables:
                options["state_var"] = variables[op.op_id]
            before = read_state(spark, checkpoint, batch_id=start, **options)
            after = {
                _identity(row) for row in read_state(spark, checkpoint, batch_id=end, **options)
            }
        except StateReadError as error:
            op.kept_unread = str(error)
            continue
        kept = [_shown(row) for row in before if _identity(row) in after]
        kept.sort(key=_identity)
        op.kept, op.kept_count, op.kept_of = kept[:sample], len(kept), len(before)


def _shown(row: dict[str, Any]) -> dict[str, Any]:
    """A state row as the report shows it: a dedup's placeholder value left out."""
    if row.get("value") == {"__dummy__": None}:
        return {k: v for k, v in row.items() if k != "value"}
    return row


def _identity(row: Mapping[str, Any]) -> str:
    """What makes a state row the same row at two batches: its key (a join side's rows
    share keys, so there the value too); an aggregate's value changes, its key not."""
    from kafkatest.assertions.report import jsonable

    part = {k: row.get(k) for k in ("side", "key", "list_element", "user_map_key")}
    if "side" in row:
        part["value"] = row.get("value")
    return json.dumps(jsonable(part), sort_keys=True)
