"""What the oracles share: seeding the input once, running the job, reading each run's
sink the way the job writes it, comparing two runs and explaining what differs.

Each oracle (`kafkatest.oracles.invariants`, `kafkatest.oracles.combined`) is a plan of
runs and comparisons on one `Oracle`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from kafkatest.jobs import job_name
from kafkatest.oracles.batches import batch_ends, limit_for, most_batches
from kafkatest.oracles.compare import (
    Tracer,
    canonical,
    explain,
    late_records,
    multiset_difference,
)
from kafkatest.oracles.excuses import judge_late
from kafkatest.oracles.inputs import InputRecord, Placement, copy_inputs, seed_inputs, to_epoch_ms
from kafkatest.oracles.options import OracleOptions
from kafkatest.oracles.report import Comparison, OracleAssertionError, OracleReport
from kafkatest.oracles.runs import Job, OracleError, Runner, RunResult
from kafkatest.oracles.sinks import SinkShapeError, as_table, default_reader
from kafkatest.oracles.stops import StopPoint

#: Failures of Spark's own machinery under load, not of the job: a run that meets one is
#: run again (Spark waits a fixed 10 s for a new Python worker to connect back).
TRANSIENT = ("Python worker failed to connect back",)
RETRIES = 2


class Oracle:
    """Runs of one job over one input, read and compared; `report` says what happened."""

    def __init__(
        self, name: str, job: Job, records: Iterable[Any] | str, options: OracleOptions
    ) -> None:
        self.name = name
        self.job = job
        self.options = options
        self.records = records
        self.partitions = options.source_partitions
        self.runner = self._runner()
        self.read_sink = options.read_sink or default_reader(
            options.sink, options.broker, options.spark
        )
        self.inputs: list[InputRecord] = []
        self.first: Placement | None = None
        #: The seeded topic until a run takes it (later runs read copies of it).
        self._untaken: Placement | None = None
        #: The output mode the sinks are read with: given, or read from the first run.
        self.output_mode = options.output_mode
        self.event_time = options.event_time
        self.report = OracleReport(name, job_name(job), 0, self.partitions)

    def _runner(self) -> Runner:
        return Runner(self.job, self.options)

    def __enter__(self) -> Oracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.runner.close()

    # -- input -------------------------------------------------------------------

    def seed(self) -> Placement:
        """Seed the caller's records once into a fresh topic; they, placed, are the input."""
        if self.first is None:
            topic = self.runner.new_topic("input", self.partitions)
            seed_options = dict(self.options.seed_options or {})
            self.inputs, self.first = seed_inputs(
                self.options.broker, topic, self.records, seed_options
            )
            self._untaken = self.first
            self.report.inputs = len(self.inputs)
        return self.first

    def source(self, name: str, copies: int = 1) -> Placement:
        """A topic holding the input (`copies` times): the seeded one for its first use."""
        self.seed()
        if copies == 1 and self._untaken is not None:
            taken, self._untaken = self._untaken, None
            return taken
        topic = self.runner.new_topic(name, self.partitions)
        return copy_inputs(self.options.broker, topic, self.inputs, copies)

    def sizes(self) -> dict[int, int]:
        """Records per partition of the input."""
        out: dict[int, int] = {}
        for partition, _offset in self.seed().at:
            out[partition] = out.get(partition, 0) + 1
        return out

    def limit_reaching(self, batches: int, given: int | None, why: str) -> int:
        """A ``maxOffsetsPerTrigger`` that gives at least `batches` data batches: `given`
        if it does, else the largest that does; with fewer partitions (when the caller
        left `partitions` to the oracle) if 3 cannot; refused before any run if none can."""
        sizes = self.sizes()
        limit = given if given is not None else limit_for(sizes, batches)
        if limit is not None and len(batch_ends(sizes, limit)) >= batches:
            return limit
        if given is None and self.options.partitions is None and self.partitions > 1:
            self.partitions = 1
            self.report.partitions = 1
            self.report.notes.append(
                f"the input was placed in 1 partition, not 3: {why} needs {batches} "
                "batches, and Spark reads at least one record of each partition per batch"
            )
            self.runner.close()
            self.runner = self._runner()
            self.first = self._untaken = None
            return self.limit_reaching(batches, given, why)
        most = most_batches(sizes)
        raise OracleError(
            f"{why} needs at least {batches} micro-batches, but {len(self.inputs)} records in "
            f"{len(sizes)} partition(s) give at most {most}"
            + (f" with max_offsets_per_trigger={given}" if given is not None else "")
            + " (Spark reads at least one record of each partition with data per batch): "
            f"give at least {batches * max(1, len(sizes))} records, or partitions=1, or stops "
            "at earlier batches"
        )

    # -- runs --------------------------------------------------------------------

    def run(
        self,
        name: str,
        placement: Placement,
        max_offsets_per_trigger: int | None,
        stops: Sequence[StopPoint] = (),
    ) -> RunResult:
        for attempt in range(1 + RETRIES):
            try:
                result = self.runner.run(name, placement.topic, max_offsets_per_trigger, stops)
                break
            except OracleError as error:
                if not any(words in str(error) for words in TRANSIENT) or attempt == RETRIES:
                    raise
                self.report.notes.append(
                    f"run {name!r} was run again on a fresh sink and checkpoint: Spark's "
                    "Python worker did not connect back within the 10 s Spark gives it (a "
                    "loaded machine), which says nothing of the job"
                )
        result.placement = placement.at
        if self.output_mode is None:
            planned = result.plan.output_mode if result.plan is not None else None
            self.output_mode = planned or "append"
        self._find_event_time(result)
        result.rows = self.read(result)
        self.report.runs.append(result)
        return result

    def read(self, result: RunResult) -> list[dict[str, Any]]:
        """The run's sink as the rows to compare, the way its output mode writes them."""
        rows = self.read_sink(result.sink)
        if self.options.read_sink is None:
            try:
                rows = self._as_written(rows, result)
            except SinkShapeError as error:
                raise OracleError(f"run {result.name!r}: {error}") from None
        ignore = self.options.ignore
        return [_without(row, ignore) for row in rows] if ignore else rows

    def _as_written(self, rows: list[dict[str, Any]], result: RunResult) -> list[dict[str, Any]]:
        mode, sink = self.output_mode, self.options.sink
        if mode in ("update", "complete") and sink == "topic":
            return as_table(rows)
        if mode == "update" and sink == "memory":
            keys = result.plan.state_keys if result.plan is not None else ()
            if not keys:
                raise SinkShapeError(
                    "a memory sink in update mode holds every update, and the query's plan "
                    "names no grouping columns to keep the last one per key: give read_sink="
                )
            return as_table(rows, keys)
        if sink == "topic" and result.first_attempts:
            spans = result.first_attempts
            result.replayed_rows = [
                row for i, row in enumerate(rows) if any(a <= i < b for a, b in spans)
            ]
        return rows

    def _find_event_time(self, result: RunResult) -> None:
        """The event-time column: given, from the plan, or (where Spark showed a
        watermark but no plan) the input field whose latest value Spark reported."""
        if self.event_time is None and result.watermark_column:
            self.event_time = result.watermark_column
        if self.event_time is not None or not result.watermark_reported:
            return
        found = _field_with_latest(self.inputs, result.event_time_max_ms)
        if found is not None:
            self.event_time = found
            self.report.notes.append(
                f"the watermark's column, not in the query's plan, is {found!r}: its "
                "latest value is the latest event time Spark reported"
            )

    # -- comparing ---------------------------------------------------------------

    def compare(self, baseline: RunResult, other: RunResult, duplicates: str) -> Comparison:
        other_rows = other.rows
        replayed = 0
        if duplicates == "replayed":
            other_rows, replayed = _without_replays(other.rows, other.replayed_rows)
            duplicates = "forbid"
        only_base, only_other, matched = multiset_difference(
            baseline.rows, other_rows, self.options.tolerance, duplicates=duplicates
        )
        comparison = Comparison(
            baseline.name,
            other.name,
            duplicates,
            matched,
            allow_late=self.options.allow_late,
            rows_baseline=len(baseline.rows),
            rows_other=len(other_rows),
            replayed=replayed,
        )
        if only_base or only_other:
            self._explain(comparison, baseline, other, only_base, only_other)
        self.report.comparisons.append(comparison)
        return comparison

    def _explain(
        self,
        comparison: Comparison,
        baseline: RunResult,
        other: RunResult,
        only_base: list[dict[str, Any]],
        only_other: list[dict[str, Any]],
    ) -> None:
        watermarked = any(r.watermark_reported or r.watermark_column for r in (baseline, other))
        if watermarked and self.event_time is None:
            self.report.notes.append(
                "the job has a watermark, but its column is neither in the query's plan nor "
                "found from Spark's progress: no record could be told late. Pass "
                "event_time=<the value field the watermark is on>"
            )
        tracer = Tracer(self.inputs, self.event_time, self.options.group_by)
        late = late_records(tracer, [baseline, other]) if watermarked else {}
        comparison.late = list(late.values())
        comparison.only_in_baseline = explain(tracer, only_base, baseline.name, late)
        comparison.only_in_other = explain(tracer, only_other, other.name, late)
        sides = {baseline.name: comparison.only_in_baseline, other.name: comparison.only_in_other}
        judge_late(tracer, late, sides, self.options.tolerance)

    def verdict(self) -> OracleReport:
        if not self.report.ok:
            raise OracleAssertionError(self.report)
        return self.report


def _without_replays(
    rows: list[dict[str, Any]], replayed: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], int]:
    """`rows` less one copy of each replayed first-attempt row that the replay wrote
    again (an equal row elsewhere in the run); a first attempt the replay did not repeat
    stays, as a difference."""
    counts = Counter(canonical(row) for row in rows)
    drop: Counter[Any] = Counter()
    for row in replayed:
        key = canonical(row)
        if counts[key] - drop[key] >= 2:
            drop[key] += 1
    out = []
    for row in rows:
        key = canonical(row)
        if drop[key]:
            drop[key] -= 1
            continue
        out.append(row)
    return out, len(rows) - len(out)


def _field_with_latest(inputs: Sequence[InputRecord], latest_ms: int | None) -> str | None:
    """The one input field (or the Kafka ``timestamp``) whose latest time is `latest_ms`."""
    if latest_ms is None or not inputs:
        return None
    candidates: dict[str, int] = {}
    stamps = [i.record.timestamp_ms for i in inputs if i.record.timestamp_ms is not None]
    if stamps:
        candidates["timestamp"] = max(stamps)
    for item in inputs:
        value = item.row()["value"]
        if not isinstance(value, dict):
            continue
        for name, got in value.items():
            stamp = to_epoch_ms(got) if isinstance(got, str) else None
            if stamp is not None:
                candidates[name] = max(candidates.get(name, stamp), stamp)
    matching = [name for name, stamp in candidates.items() if stamp == latest_ms]
    return matching[0] if len(matching) == 1 else None


def _without(row: dict[str, Any], ignore: Sequence[str]) -> dict[str, Any]:
    """`row` minus the `ignore`d columns (``a.b`` reaches into a struct or JSON value)."""
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
