"""Triggers: when, in a job's run, a fault (or a crash) happens.

A trigger is a condition on what the job has done so far. It fires its actions
exactly once, and remembers the batch and offsets it fired at, so a report can
say "the topic was deleted after batch 1, at src[0]=5" instead of "at some point".
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kafkatest.scenarios.events import BatchEvent, TopicOffsets, offsets_text

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

    def maybe_fire(self, last: BatchEvent | None, started_at: float) -> bool:
        """Fire (run the actions) if due and not fired yet; True when this call fired."""
        with self._lock:
            elapsed = time.monotonic() - started_at
            if self.firing is not None or not self.due(last, elapsed):
                return False
            self.firing = Firing(
                self.describe(),
                None if last is None else last.batch_id,
                {} if last is None else dict(last.end_offsets),
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

    def maybe_fire(self, last: BatchEvent | None, started_at: float) -> bool:
        """The event the condition returns is where it fired, not the last finished batch."""
        with self._lock:
            if self.firing is not None or not self.due(last, 0.0):
                return False
            event = self.seen
            assert event is not None
            self.firing = Firing(
                self.describe(),
                event.batch_id,
                dict(event.end_offsets),
                time.monotonic() - started_at,
            )
        for action in self.actions:
            action()
        return True
