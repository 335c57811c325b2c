"""Triggers: when, in a job's run, a fault (or a crash) happens; the batch events they
see, and the watch that feeds those events to them in a thread of its own.

A trigger is a condition on what the job has done so far. It fires its actions
exactly once, and remembers the batch and offsets it fired at, so a report can
say "the topic was deleted after batch 1, at src[0]=5" instead of "at some point".
Events come from two places that must look the same to a trigger: the progress
Spark reports to a `StreamingQueryListener` (a job in this process) and the
checkpoint directory (a job in another process, which may be killed). Actions run
in the watch's thread, never in Spark's listener thread: a fault that takes seconds
(deleting a topic on real Kafka) must not stall Spark's listener bus. An action that
raises is kept and reported, and stops the watch.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafkatest.checkpoints.logs import (
    TopicOffsets,
    committed_batches,
    planned_batches,
    planned_offsets,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class BatchEvent:
    """A micro-batch Spark finished (or, from a checkpoint, planned and maybe finished)."""

    batch_id: int
    end_offsets: TopicOffsets
    committed: bool = True
    at: float = field(default_factory=time.monotonic)


def progress_event(progress: Any) -> BatchEvent:
    """A `StreamingQueryProgress` (or its JSON dict) as a BatchEvent."""
    if isinstance(progress, str):
        progress = json.loads(progress)
    if isinstance(progress, dict):
        batch_id = int(progress["batchId"])
        sources = [s.get("endOffset") for s in progress.get("sources", [])]
    else:
        batch_id = int(progress.batchId)
        sources = [s.endOffset for s in progress.sources]
    offsets: TopicOffsets = {}
    for raw in sources:
        data = json.loads(raw) if isinstance(raw, str) else raw
        if not isinstance(data, dict):
            continue
        for topic, partitions in data.items():
            if isinstance(partitions, dict):
                for partition, offset in partitions.items():
                    offsets[(topic, int(partition))] = int(offset)
    return BatchEvent(batch_id, offsets)


def offsets_text(offsets: TopicOffsets) -> str:
    """``topic[0]=5, topic[1]=3``: how reports print offsets."""
    return ", ".join(f"{t}[{p}]={o}" for (t, p), o in sorted(offsets.items())) or "(none)"


Action = Callable[[], object]


@dataclass(frozen=True)
class Firing:
    """When a trigger fired: the last batch the job had finished and its offsets."""

    trigger: str
    batch_id: int | None
    offsets: TopicOffsets
    seconds_after_start: float

    def line(self) -> str:
        where = "before any batch" if self.batch_id is None else f"after batch {self.batch_id}"
        return (
            f"{self.trigger} fired {where} at {offsets_text(self.offsets)} "
            f"({self.seconds_after_start:.1f}s after start)"
        )


@dataclass
class Trigger(ABC):
    """Base: a condition checked against each batch event, and what to do once true."""

    actions: Sequence[Action] = ()
    label: str = ""
    firing: Firing | None = field(default=None, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def describe(self) -> str:
        return self.label or type(self).__name__

    @abstractmethod
    def due(self, last: BatchEvent | None, elapsed_s: float) -> bool:
        """Whether the condition holds after `last` batch, `elapsed_s` into the run."""

    def _fired_at(self, last: BatchEvent | None) -> BatchEvent | None:
        """The batch a firing is reported at: the last one the job finished."""
        return last

    def maybe_fire(self, last: BatchEvent | None, started_at: float) -> bool:
        """Fire (run the actions) if due and not fired yet; True when this call fired."""
        with self._lock:
            elapsed = time.monotonic() - started_at
            if self.firing is not None or not self.due(last, elapsed):
                return False
            at = self._fired_at(last)
            self.firing = Firing(
                self.describe(),
                None if at is None else at.batch_id,
                {} if at is None else dict(at.end_offsets),
                elapsed,
            )
        for action in self.actions:
            action()
        return True


@dataclass
class BeforeStart(Trigger):
    """Fires before the job starts (the fault is there from the job's first look)."""

    def due(self, last: BatchEvent | None, elapsed_s: float) -> bool:
        return True

    def describe(self) -> str:
        return self.label or "before start"


@dataclass
class AfterBatch(Trigger):
    """Fires once batch `batch_id` (or a later one) has finished."""

    batch_id: int = 0

    def due(self, last: BatchEvent | None, elapsed_s: float) -> bool:
        return last is not None and last.committed and last.batch_id >= self.batch_id

    def describe(self) -> str:
        return self.label or f"after batch {self.batch_id}"


@dataclass
class AtOffsets(Trigger):
    """Fires once the job has consumed up to these offsets (end offsets of a finished batch).

    `offsets` maps (topic, partition) to the offset the job must have reached: the
    next offset it will read, as Spark's progress ``endOffset`` shows it.
    """

    offsets: Mapping[tuple[str, int], int] = field(default_factory=dict)

    def due(self, last: BatchEvent | None, elapsed_s: float) -> bool:
        if last is None or not last.committed:
            return False
        return all(last.end_offsets.get(tp, -1) >= want for tp, want in self.offsets.items())

    def describe(self) -> str:
        return self.label or f"consumed up to {offsets_text(dict(self.offsets))}"


@dataclass
class AfterDelay(Trigger):
    """Fires `seconds` after the job started, whatever it has done by then."""

    seconds: float = 0.0

    def due(self, last: BatchEvent | None, elapsed_s: float) -> bool:
        return elapsed_s >= self.seconds

    def describe(self) -> str:
        return self.label or f"after {self.seconds:g}s"


@dataclass
class WhenTrue(Trigger):
    """Fires when `condition()` holds (e.g. the sink got records of an uncommitted batch)."""

    condition: Callable[[], BatchEvent | None] = field(default=lambda: None)
    seen: BatchEvent | None = field(default=None, init=False)

    def due(self, last: BatchEvent | None, elapsed_s: float) -> bool:
        self.seen = self.condition()
        return self.seen is not None

    def _fired_at(self, last: BatchEvent | None) -> BatchEvent | None:
        """The event the condition returns is where it fired, not the last finished batch."""
        return self.seen


POLL_S = 0.05


class TriggerWatch:
    """Evaluates triggers against the latest batch event until all fired or it is stopped."""

    def __init__(
        self, triggers: Sequence[Trigger], latest: Callable[[], BatchEvent | None]
    ) -> None:
        self.triggers = list(triggers)
        self.latest = latest
        self.started_at = time.monotonic()
        self.error: BaseException | None = None
        #: True while a trigger's actions run (a restart may be half done).
        self.acting = False
        self._passes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kafkatest-triggers", daemon=True)

    def start(self) -> TriggerWatch:
        self.started_at = time.monotonic()
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                pending = [t for t in self.triggers if t.firing is None]
                if not pending:
                    return
                last = self.latest()
                for trigger in pending:
                    self.acting = True
                    try:
                        trigger.maybe_fire(last, self.started_at)
                    finally:
                        self.acting = False
            except BaseException as exc:  # reported by the runner, never swallowed
                self.error = exc
                return
            self._passes += 1
            self._stop.wait(POLL_S)

    def settled(self) -> bool:
        """True once a whole pass over the triggers ran after this call began.

        A job that just ended may have produced the very event a trigger waits
        for; this gives the trigger its look before the run is declared over.
        """
        if not self._thread.is_alive():
            return not self.acting
        seen = self._passes
        deadline = time.monotonic() + 10 * POLL_S
        while self._passes < seen + 2 and self._thread.is_alive():
            if time.monotonic() > deadline:
                break
            time.sleep(POLL_S / 2)
        return not self.acting

    @property
    def done(self) -> bool:
        """Every trigger has fired and its actions have run."""
        return all(t.firing is not None for t in self.triggers) and not self.acting

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=120)


class ProgressFeed:
    """Batch events of one streaming query in this process, from a StreamingQueryListener."""

    def __init__(self, spark: SparkSession) -> None:
        from pyspark.sql.streaming import StreamingQueryListener

        feed = self

        class _Listener(StreamingQueryListener):
            def onQueryStarted(self, event: Any) -> None:
                pass

            def onQueryProgress(self, event: Any) -> None:
                feed._add(str(event.progress.id), progress_event(event.progress))

            def onQueryIdle(self, event: Any) -> None:
                pass

            def onQueryTerminated(self, event: Any) -> None:
                pass

        self._spark = spark
        self._events: dict[str, list[BatchEvent]] = {}
        self._lock = threading.Lock()
        self.query_id: str | None = None
        self._listener = _Listener()
        spark.streams.addListener(self._listener)

    def _add(self, query_id: str, event: BatchEvent) -> None:
        with self._lock:
            self._events.setdefault(query_id, []).append(event)

    def events(self) -> list[BatchEvent]:
        with self._lock:
            return list(self._events.get(self.query_id or "", []))

    def latest(self) -> BatchEvent | None:
        events = self.events()
        return events[-1] if events else None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._spark.streams.removeListener(self._listener)


class CheckpointFeed:
    """Batch events read from a checkpoint directory (a job in another process)."""

    def __init__(self, checkpoint: str) -> None:
        self.checkpoint = checkpoint

    def latest(self) -> BatchEvent | None:
        committed = committed_batches(self.checkpoint)
        if not committed:
            return None
        return BatchEvent(committed[-1], planned_offsets(self.checkpoint, committed[-1]))

    def planned(self) -> BatchEvent | None:
        """The newest planned batch, committed or not."""
        planned = planned_batches(self.checkpoint)
        if not planned:
            return None
        newest = planned[-1]
        return BatchEvent(
            newest,
            planned_offsets(self.checkpoint, newest),
            committed=newest in set(committed_batches(self.checkpoint)),
        )
