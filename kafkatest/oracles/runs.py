"""One run of the job under an oracle: fresh topics, checkpoint and sink, run to the end.

A run may be stopped and resumed from its checkpoint. The stop is made exact by
taking a batch's log entry before Spark can write it: a file at ``offsets/<n+1>``
makes the query fail right after batch n committed (a clean stop after batch n),
one at ``commits/<n>`` makes it fail after batch n's sink write and before its
commit, the window a crashed driver leaves (``offsets/n`` without ``commits/n``),
so the resumed query replays batch n. Racing a kill against a few milliseconds of
a job we cannot slow down would make that window a matter of luck.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafkatest.brokers.base import Broker
from kafkatest.checkpoints import CHECKPOINT_FAULTS
from kafkatest.checkpoints.damage import Damage
from kafkatest.checkpoints.explain import (
    LogSnapshot,
    RecordedFault,
    RestartExplanation,
    record_checkpoint_fault,
)
from kafkatest.checkpoints.logs import committed_batches, planned_batches, planned_offsets
from kafkatest.tempdirs import owned_tempdir, remove

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery

Job = Callable[..., Any] | str
STOP_KINDS = ("after_batch", "crash_before_commit")
_LOG_CONFLICT = ("CONCURRENT_STREAM_LOG_UPDATE", "Concurrent update to the")


class OracleError(Exception):
    """An oracle could not run the job as asked (the job failed, a stop was never reached)."""


@dataclass(frozen=True)
class StopPoint:
    """Where a run is interrupted: ``after_batch:n`` or ``crash_before_commit:n``, and
    optionally a checkpoint fault applied before it resumes (``after_batch:2+rewind-to-0``,
    any name of `kafkatest.checkpoints.CHECKPOINT_FAULTS`)."""

    kind: str
    batch: int
    fault: str | None = None

    @classmethod
    def parse(cls, text: str) -> StopPoint:
        point, _, fault = text.partition("+")
        kind, _, number = point.partition(":")
        if kind not in STOP_KINDS or not number.isdigit():
            raise ValueError(
                f"stop {text!r}: give after_batch:<n> or crash_before_commit:<n> (n a batch id), "
                "optionally +<checkpoint fault> (after_batch:2+rewind-to-0)"
            )
        rewind = fault.startswith("rewind-to-") and fault[len("rewind-to-") :].isdigit()
        if fault and fault not in CHECKPOINT_FAULTS and not rewind:
            raise ValueError(
                f"stop {text!r}: unknown checkpoint fault {fault!r}: one of "
                f"{', '.join(CHECKPOINT_FAULTS)}, or rewind-to-<n>"
            )
        return cls(kind, int(number), fault or None)

    def __str__(self) -> str:
        return f"{self.kind}:{self.batch}" + (f"+{self.fault}" if self.fault else "")

    def blocked_file(self, checkpoint: Path) -> Path:
        """The log entry taken from Spark to stop the query at this point."""
        if self.kind == "after_batch":
            return checkpoint / "offsets" / str(self.batch + 1)
        return checkpoint / "commits" / str(self.batch)


class _Blocker:
    """Takes a stop point's log entry as soon as batch n is planned (``offsets/n`` written).

    Batch n has then still to run its tasks, which takes Spark far longer than this
    thread's 2 ms polling; `too_late` says if it committed first anyway.
    """

    def __init__(self, checkpoint: Path, stop: StopPoint) -> None:
        self.stop = stop
        self.path = stop.blocked_file(checkpoint)
        self.planned = checkpoint / "offsets" / str(stop.batch)
        self.placed = False
        self.too_late = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="kafkatest-oracle-stop")

    def __enter__(self) -> _Blocker:
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._done.is_set():
            if self.planned.exists() and self.path.parent.is_dir():
                try:
                    os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                    self.placed = True
                except FileExistsError:
                    self.too_late = True
                return
            self._done.wait(0.002)

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        if self.placed:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()


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
    #: planned anew or skipped (and the fault applied between, if any).
    restart: RestartExplanation | None = None

    def batch_of(self, partition: int, offset: int) -> Batch | None:
        """The batch that read this source position."""
        for batch in self.batches:
            if batch.end_offsets.get(partition, -1) > offset:
                return batch
        return None

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "settings": self.settings,
            "seconds": round(self.seconds, 2),
            "rows": len(self.rows),
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
            "restart": self.restart.lines() if self.restart is not None else None,
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


def watermark_column(query: StreamingQuery) -> str | None:
    """The column the query's ``withWatermark`` names, read from its plan.

    Only a classic session shows its plan (py4j); Spark Connect gives None.
    """
    try:
        plan = str(query._jsq.explainInternal(True))  # type: ignore[attr-defined]
    except Exception:
        return None
    found = re.search(r"EventTimeWatermark\s+(?:[0-9a-f-]{36},\s*)?([^#,\s]+)#", plan)
    return found.group(1) if found else None


class Runner:
    """Runs one job again and again, each run on its own topics, checkpoint and sink."""

    def __init__(
        self,
        job: Job,
        *,
        spark: SparkSession | None,
        broker: Broker,
        partitions: int,
        sink: str,
        process: bool,
        timeout_s: float,
        job_options: Mapping[str, str] | None = None,
    ) -> None:
        if sink not in ("topic", "path"):
            raise ValueError(f'sink must be "topic" or "path", not {sink!r}')
        if process and not isinstance(job, str):
            job = job_spec(job)
        if not process and spark is None:
            raise ValueError("a job run in this process needs spark= (or process=True)")
        self.job = job
        self.spark = spark
        self.broker = broker
        self.partitions = partitions
        self.sink = sink
        self.process = process
        self.timeout_s = timeout_s
        self.job_options = dict(job_options or {})
        self.tag = uuid.uuid4().hex[:8]
        self._topics: list[str] = []
        self._dirs: list[Path] = []

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
        """A fresh sink: a topic, or a directory that does not exist yet."""
        if self.sink == "topic":
            return self.new_topic(f"{name}-sink", 1)
        return str(self.new_dir("kafkatest-oracle-sink-") / "out")

    def run(
        self,
        name: str,
        source: str,
        max_offsets_per_trigger: int | None,
        stop: StopPoint | None = None,
    ) -> tuple[RunResult, str]:
        """Run the job over `source` to the end (stopping and resuming at `stop`);
        returns the run and its sink."""
        options = {**self.job_options, "trigger": "availableNow"}
        if max_offsets_per_trigger is not None:
            options["maxOffsetsPerTrigger"] = str(max_offsets_per_trigger)
        sink = self.sink_target(name)
        checkpoint = self.new_dir("kafkatest-oracle-checkpoint-") / "checkpoint"
        result = RunResult(name, {k: v for k, v in options.items() if k != "trigger"})
        started = time.monotonic()
        recorded: RecordedFault | None = None
        if stop is not None:
            with _Blocker(checkpoint, stop) as blocker:
                ended = self._leg(source, sink, checkpoint, options, result)
            if blocker.too_late or not blocker.placed or ended == "finished":
                raise OracleError(
                    f"run {name!r}: the job never reached {stop} (it ran "
                    f"{len(planned_batches(checkpoint))} batches"
                    + (f", and batch {stop.batch} committed at once" if blocker.too_late else "")
                    + "): stop earlier, or give a smaller max_offsets_per_trigger"
                )
            result.legs.append(_stopped_text(stop, checkpoint))
            recorded = _fault_at(stop, checkpoint)
            if stop.fault:
                result.legs.append(f"then the checkpoint fault {recorded.damage}")
        self._leg(source, sink, checkpoint, options, result)
        result.seconds = time.monotonic() - started
        result.batches = read_batches(checkpoint, source)
        if recorded is not None:
            result.restart = recorded.explain(checkpoint)
        return result, sink

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
        from kafkatest.scenarios.in_process_run import _job_security
        from kafkatest.scenarios.loading import load_job
        from kafkatest.spark import wait_for_query

        job = load_job(self.job) if isinstance(self.job, str) else self.job
        query = job(
            self.spark,
            self.broker.bootstrap_servers,
            source,
            sink,
            str(checkpoint),
            options=dict(options),
            **_job_security(self.broker),
        )
        try:
            wait_for_query(query, timeout_s=self.timeout_s)
        except Exception as exc:
            if any(text in str(exc) for text in _LOG_CONFLICT):
                return "stopped"
            raise OracleError(f"run {result.name!r}: the job failed: {exc}") from exc
        finally:
            result.watermark_column = result.watermark_column or watermark_column(query)
        return "finished"

    def _process_leg(
        self, source: str, sink: str, checkpoint: Path, options: dict[str, str]
    ) -> str:
        from kafkatest.scenarios.process import JobProcess

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
        if outcome.failed and any(text in outcome.error for text in _LOG_CONFLICT):
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
        for path in self._dirs:
            remove(path)


def _fault_at(stop: StopPoint, checkpoint: Path) -> RecordedFault:
    """The stop's checkpoint fault applied, with the logs before and after it; without a
    fault, the stop itself as the damage. A crash before the commit left batch n's rows
    in the sink without ``commits/n``: it counts as delivered."""
    written = (stop.batch,) if stop.kind == "crash_before_commit" else ()
    if stop.fault:
        return record_checkpoint_fault(checkpoint, stop.fault, written=written)
    detail = (
        f"the query died after batch {stop.batch}'s sink write, before commits/{stop.batch}"
        if written
        else f"the query stopped after batch {stop.batch} committed"
    )
    damage = Damage(str(stop), checkpoint, batches=written, detail=detail)
    logs = LogSnapshot.read(checkpoint, written)
    return RecordedFault(damage, logs, logs)


def _stopped_text(stop: StopPoint, checkpoint: Path) -> str:
    if stop.kind == "after_batch":
        return f"stopped after batch {stop.batch} committed; resumed from the checkpoint"
    planned = planned_batches(checkpoint)
    committed = set(committed_batches(checkpoint))
    assert stop.batch in planned and stop.batch not in committed
    return (
        f"died after batch {stop.batch}'s sink write, before its commit (offsets/{stop.batch} "
        f"without commits/{stop.batch}); resumed, replaying batch {stop.batch}"
    )


def job_spec(job: Callable[..., Any]) -> str:
    """``module:function`` for a job passed as a function, so its own process can load it."""
    module = getattr(job, "__module__", None)
    name = getattr(job, "__qualname__", "")
    if not module or module == "__main__" or "." in name or "<" in name:
        raise ValueError(
            f"process=True runs the job in its own process, which must import it: pass "
            f"'module:function' or 'path/to/file.py:function', not {job!r}"
        )
    return f"{module}:{name}"
