"""Feed a running job's batch events to its triggers, in a thread of our own.

Actions run in the watch thread, never in Spark's listener thread: a fault that
takes seconds (deleting a topic on real Kafka) must not stall Spark's listener
bus. An action that raises is kept and reported, and stops the watch.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kafkatest.checkpoints.logs import committed_batches, planned_batches, planned_offsets
from kafkatest.scenarios.events import BatchEvent, progress_event
from kafkatest.scenarios.triggers import Trigger

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

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
