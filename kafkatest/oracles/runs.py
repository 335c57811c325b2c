"""One run of the job under an oracle: fresh topics, checkpoint and sink, run to the end,
stopped and resumed at each of its stops (`kafkatest.oracles.stops`) on the way.

A run keeps what the oracles need to judge it besides the sink: the batches its
checkpoint planned and their watermarks, the query's plan (output mode, watermark
column), the rows each batch wrote (Spark's progress reports), and for a Kafka sink
the place of the rows a crashed batch wrote before it was replayed: the duplicates a
replay explains, and no others.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafkatest._ground.tempdirs import owned_tempdir, remove
from kafkatest.checkpoints.explain import RecordedFault, RestartExplanation
from kafkatest.checkpoints.logs import committed_batches, planned_batches, planned_offsets
from kafkatest.jobs import JobProcess, job_spec, start_job
from kafkatest.oracles.options import OracleOptions
from kafkatest.oracles.stops import LOG_CONFLICT, Blocker, StopPoint, fault_at, stopped_text
from kafkatest.spark.plans import QueryPlan

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery

Job = Callable[..., Any] | str


class OracleError(Exception):
    """An oracle could not run the job as asked (the job failed, a stop was never reached)."""


@dataclass(frozen=True)
class Batch:
    """A micro-batch as the checkpoint records it: end offsets per source partition and
    the event-time watermark it ran with."""

    id: int
    end_offsets: dict[int, int]
    watermark_ms: int
    committed: bool


@dataclass
class RunResult:
    """What one run did: settings, time taken, the batches, what it left in its sink."""

    name: str
    settings: dict[str, str]
    seconds: float = 0.0
    rows: list[dict[str, Any]] = field(default_factory=list)
    batches: list[Batch] = field(default_factory=list)
    legs: list[str] = field(default_factory=list)
    #: The column the job's watermark is on (read from its plan), when it has one.
    watermark_column: str | None = None
    #: Input records behind each source position of this run: (partition, offset) -> (index, copy).
    placement: Mapping[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    #: For a stopped run: what its checkpoint's logs say the resumed query ran again,
    #: planned anew or skipped (and the fault applied between, if any); the last stop's.
    restart: RestartExplanation | None = None
    #: Every stop's explanation, in order (a combined run stops more than once).
    restarts: list[RestartExplanation] = field(default_factory=list)
    #: The query's plan (output mode, watermarks), when Spark showed it.
    plan: QueryPlan | None = None
    #: Rows written per batch id, from Spark's progress (-1: the sink did not say).
    output_rows: dict[int, int] = field(default_factory=dict)
    #: The latest event time and the watermark Spark reported, in epoch ms (None: none).
    event_time_max_ms: int | None = None
    watermark_reported: bool = False
    #: For a Kafka sink: the write positions [start, end) of rows a crashed batch wrote
    #: before the resumed query ran it again (at-least-once duplicates, and no others).
    first_attempts: list[tuple[int, int]] = field(default_factory=list)
    #: Rows left out of `rows` as a replayed batch's first attempt (duplicates="replayed").
    replayed_rows: list[dict[str, Any]] = field(default_factory=list)
    #: Each leg's progress reports, in order: a leg is one start of the query.
    leg_reports: list[list[dict[str, Any]]] = field(default_factory=list)
    sink: str = ""

    def batch_of(self, partition: int, offset: int) -> Batch | None:
        """The batch that read this source position."""
        return next((b for b in self.batches if b.end_offsets.get(partition, -1) > offset), None)

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "settings": self.settings,
            "seconds": round(self.seconds, 2),
            "rows": len(self.rows),
            "replayed_rows": len(self.replayed_rows),
            "output_mode": self.plan.output_mode if self.plan else None,
            "batches": [
                {
                    "id": b.id,
                    "end_offsets": b.end_offsets,
                    "watermark_ms": b.watermark_ms,
                    "committed": b.committed,
                }
                for b in self.batches
            ],
            "legs": self.legs,
            "restart": [line for r in self.restarts for line in r.lines()] or None,
            "watermark_column": self.watermark_column,
        }


def read_batches(checkpoint: Path, source: str) -> list[Batch]:
    """Each planned batch's end offsets on `source` and its watermark, from the checkpoint."""
    committed = set(committed_batches(checkpoint))
    out = []
    for batch_id in planned_batches(checkpoint):
        offsets = planned_offsets(checkpoint, batch_id)
        ends = {p: o for (topic, p), o in offsets.items() if topic == source}
        out.append(Batch(batch_id, ends, _watermark(checkpoint, batch_id), batch_id in committed))
    return out


def _watermark(checkpoint: Path, batch_id: int) -> int:
    try:
        lines = (checkpoint / "offsets" / str(batch_id)).read_text("utf-8").splitlines()
        return int(json.loads(lines[1]).get("batchWatermarkMs", 0))
    except (OSError, IndexError, ValueError, AttributeError):
        return 0


class Runner:
    """Runs one job again and again, each run on its own topics, checkpoint and sink."""

    def __init__(self, job: Job, options: OracleOptions) -> None:
        self.process = options.process
        self.job = job_spec(job) if self.process and not isinstance(job, str) else job
        self.spark = options.spark
        self.broker = options.broker
        self.sink = options.sink
        self.timeout_s = options.timeout_s
        self.job_options = dict(options.job_options or {})
        self.tag = uuid.uuid4().hex[:8]
        self._topics: list[str] = []
        self._dirs: list[Path] = []
        self._tables: list[str] = []

    def new_topic(self, name: str, partitions: int) -> str:
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:40]
        topic = f"kt-oracle-{slug}-{self.tag}-{len(self._topics)}"
        self.broker.create_topic(topic, partitions=partitions)
        self._topics.append(topic)
        return topic

    def new_dir(self, prefix: str) -> Path:
        path = owned_tempdir(prefix)
        self._dirs.append(path)
        return path

    def sink_target(self, name: str) -> str:
        """A fresh sink: a topic, a directory that does not exist yet, or a table name
        (an identifier Spark accepts as a memory sink's query name)."""
        if self.sink == "topic":
            return self.new_topic(f"{name}-sink", 1)
        if self.sink == "memory":
            table = f"kt_oracle_{self.tag}_{len(self._tables)}"
            self._tables.append(table)
            return table
        return str(self.new_dir("kafkatest-oracle-sink-") / "out")

    def run(
        self,
        name: str,
        source: str,
        max_offsets_per_trigger: int | None,
        stops: Sequence[StopPoint] = (),
    ) -> RunResult:
        """Run the job over `source` to the end, stopping and resuming at each stop."""
        options = {**self.job_options, "trigger": "availableNow"}
        if max_offsets_per_trigger is not None:
            options["maxOffsetsPerTrigger"] = str(max_offsets_per_trigger)
        sink = self.sink_target(name)
        checkpoint = self.new_dir("kafkatest-oracle-checkpoint-") / "checkpoint"
        result = RunResult(name, {k: v for k, v in options.items() if k != "trigger"}, sink=sink)
        started = time.monotonic()
        recorded = [
            self._stopped_leg(stop, source, sink, checkpoint, options, result) for stop in stops
        ]
        self._leg(source, sink, checkpoint, options, result)
        result.seconds = time.monotonic() - started
        result.batches = read_batches(checkpoint, source)
        result.restarts = [fault.explain(checkpoint) for fault in recorded]
        result.restart = result.restarts[-1] if result.restarts else None
        return result

    def resume(self, source: str, sink: str, checkpoint: Path, result: RunResult) -> None:
        """One more leg of a run kept on one checkpoint: the job starts from
        `checkpoint`, reads what `source` holds now (``Trigger.AvailableNow``) and ends.
        The bounded-state oracle seeds a batch, then calls this, batch after batch."""
        started = time.monotonic()
        self._leg(source, sink, checkpoint, {**self.job_options, "trigger": "availableNow"}, result)
        result.seconds += time.monotonic() - started

    def _stopped_leg(
        self,
        stop: StopPoint,
        source: str,
        sink: str,
        checkpoint: Path,
        options: dict[str, str],
        result: RunResult,
    ) -> RecordedFault:
        """Run to `stop`, and leave the checkpoint as a query stopped there leaves it."""
        from kafkatest.spark.logs import query_failures_to_file_only
        from kafkatest.spark.session import jvm_of

        # The sink's size when the stop's batch was planned: which rows it then wrote,
        # where Spark's progress does not say (a foreachBatch sink).
        before: list[int] = []
        snapshot = None
        if stop.replays and self.sink == "topic":
            snapshot = lambda: before.append(self._sink_count(sink))  # noqa: E731
        with (
            query_failures_to_file_only(jvm_of(self.spark)),
            Blocker(checkpoint, stop, on_planned=snapshot) as blocker,
        ):
            ended = self._leg(source, sink, checkpoint, options, result)
        if blocker.too_late or not blocker.placed or ended == "finished":
            raise OracleError(
                f"run {result.name!r}: the job never reached {stop} (it ran "
                f"{len(planned_batches(checkpoint))} batches"
                + (f", and batch {stop.batch} committed at once" if blocker.too_late else "")
                + "): stop earlier, or give a smaller max_offsets_per_trigger"
            )
        if stop.replays and self.sink == "topic":
            result.first_attempts.append(
                (self._written_before(result, stop.batch, before), self._sink_count(sink))
            )
        if (
            self.sink == "memory"
            and result.plan is not None
            and result.plan.output_mode != "complete"
        ):
            raise OracleError(
                f"run {result.name!r}: a memory sink cannot resume from its checkpoint in "
                f"{result.plan.output_mode or 'append'} mode (Spark refuses: 'This query does "
                "not support recovering from checkpoint location'), so a stop cannot be "
                "resumed: give the restart oracle a topic or path sink"
            )
        result.legs.append(stopped_text(stop, checkpoint))
        recorded = fault_at(stop, checkpoint)
        if stop.fault:
            result.legs.append(f"then the checkpoint fault {recorded.damage}")
        return recorded

    def _written_before(self, result: RunResult, batch: int, snapshot: list[int]) -> int:
        """Rows the sink held before `batch` wrote: what the committed batches before it
        wrote by Spark's progress, or the sink's size when the batch was planned."""
        counts = [result.output_rows.get(b, -1) for b in range(batch)]
        if all(count >= 0 for count in counts):
            return sum(counts)
        if snapshot:
            return snapshot[0]
        raise OracleError(
            f"run {result.name!r}: cannot tell which rows batch {batch} wrote before its "
            "replay (no progress report and no snapshot)"
        )

    def _sink_count(self, sink: str) -> int:
        return sum(self.broker.latest_offsets(sink).values())

    def _leg(
        self,
        source: str,
        sink: str,
        checkpoint: Path,
        options: dict[str, str],
        result: RunResult,
    ) -> str:
        """Start the job once and wait for its query to end: "finished" or "stopped"
        (refused a log entry the oracle took)."""
        if self.process:
            return self._process_leg(source, sink, checkpoint, options)
        from kafkatest.spark import wait_for_query
        from kafkatest.spark.connect import api_of

        assert self.spark is not None  # OracleOptions: no spark, then process=True
        with api_of(self.spark):  # the job's columns for its session's kind
            query = start_job(
                self.job, self.spark, self.broker, source, sink, str(checkpoint), options
            )
        try:
            wait_for_query(query, timeout_s=self.timeout_s)
        except Exception as exc:
            if any(text in str(exc) for text in LOG_CONFLICT):
                return "stopped"
            raise OracleError(f"run {result.name!r}: the job failed: {exc}") from exc
        finally:
            _observe(query, result)
        return "finished"

    def _process_leg(
        self, source: str, sink: str, checkpoint: Path, options: dict[str, str]
    ) -> str:
        assert isinstance(self.job, str)
        with JobProcess(
            self.job,
            self.broker.bootstrap_servers,
            source,
            sink,
            checkpoint,
            options,
            timeout_s=self.timeout_s,
        ) as process:
            outcome = process.start().wait()
        if outcome.status == "finished":
            return "finished"
        if outcome.failed and any(text in outcome.error for text in LOG_CONFLICT):
            return "stopped"
        raise OracleError(
            f"the job's process ended {outcome.status}: {outcome.error_class} {outcome.error}\n"
            f"{outcome.log_tail}"
        )

    def close(self) -> None:
        for topic in self._topics:
            with contextlib.suppress(Exception):
                if self.broker.topic_exists(topic):
                    self.broker.delete_topic(topic)
        if self.spark is not None:
            for table in self._tables:
                with contextlib.suppress(Exception):
                    self.spark.catalog.dropTempView(table)
        for path in self._dirs:
            remove(path)


def _observe(query: StreamingQuery, result: RunResult) -> None:
    """What the query showed of itself: its plan (once a run), and each batch's rows
    written, latest event time and watermark from its progress reports."""
    from kafkatest.oracles.inputs import to_epoch_ms
    from kafkatest.spark.plans import read_plan
    from kafkatest.spark.queries import progress_reports

    if result.plan is None or not result.plan.text:
        result.plan = read_plan(query)
        marks = result.plan.watermarks
        result.watermark_column = result.watermark_column or (marks[0].column if marks else None)
    reports: list[dict[str, Any]] = []
    result.leg_reports.append(reports)
    with contextlib.suppress(Exception):  # a query whose session has gone
        reports.extend(progress_reports(query))
        for report in reports:
            batch = int(report.get("batchId", -1))
            rows = (report.get("sink") or {}).get("numOutputRows", -1)
            result.output_rows[batch] = int(rows if rows is not None else -1)
            event_time = report.get("eventTime") or {}
            latest = to_epoch_ms(event_time.get("max"))
            if latest is not None:
                result.event_time_max_ms = max(result.event_time_max_ms or latest, latest)
            mark = to_epoch_ms(event_time.get("watermark"))
            result.watermark_reported |= bool(mark and mark > 0)
