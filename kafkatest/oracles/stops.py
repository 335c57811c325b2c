"""Stopping a run exactly where asked: after batch n committed, or after its sink write
and before its commit.

The stop is made exact by taking a batch's log entry before Spark can write it: a
file at ``offsets/<n+1>`` makes the query fail right after batch n committed (a clean
stop after batch n), one at ``commits/<n>`` makes it fail after batch n's sink write
and before its commit, the window a crashed driver leaves (``offsets/n`` without
``commits/n``), so the resumed query replays batch n. Racing a kill against a few
milliseconds of a job we cannot slow down would make that window a matter of luck.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kafkatest.checkpoints import CHECKPOINT_FAULTS
from kafkatest.checkpoints.damage import Damage
from kafkatest.checkpoints.explain import LogSnapshot, RecordedFault, record_checkpoint_fault
from kafkatest.checkpoints.logs import committed_batches, planned_batches

STOP_KINDS = ("after_batch", "crash_before_commit")
#: How Spark words the refusal of a log entry the oracle took: the stop's own failure.
LOG_CONFLICT = ("CONCURRENT_STREAM_LOG_UPDATE", "Concurrent update to the")


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
        if kind not in STOP_KINDS or not number.isdigit() or len(number) > 6:
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

    @property
    def replays(self) -> bool:
        """Whether the resumed query runs batch n again (its sink write is repeated)."""
        return self.kind == "crash_before_commit"

    def blocked_file(self, checkpoint: Path) -> Path:
        """The log entry taken from Spark to stop the query at this point."""
        if self.kind == "after_batch":
            return checkpoint / "offsets" / str(self.batch + 1)
        return checkpoint / "commits" / str(self.batch)


class Blocker:
    """Takes a stop point's log entry as soon as batch n is planned (``offsets/n`` written).

    Batch n has then still to run its tasks, which takes Spark far longer than this
    thread's 2 ms polling; `too_late` says if it committed first anyway.
    """

    def __init__(
        self, checkpoint: Path, stop: StopPoint, on_planned: Callable[[], None] | None = None
    ) -> None:
        self.stop = stop
        self.on_planned = on_planned
        self.path = stop.blocked_file(checkpoint)
        self.planned = checkpoint / "offsets" / str(stop.batch)
        self.placed = False
        self.too_late = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="kafkatest-oracle-stop")

    def __enter__(self) -> Blocker:
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._done.is_set():
            if self.planned.exists() and self.path.parent.is_dir():
                if self.on_planned is not None:
                    with contextlib.suppress(Exception):  # a snapshot must never lose the stop
                        self.on_planned()
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


def fault_at(stop: StopPoint, checkpoint: Path) -> RecordedFault:
    """The stop's checkpoint fault applied, with the logs before and after it; without a
    fault, the stop itself as the damage. A crash before the commit left batch n's rows
    in the sink without ``commits/n``: it counts as delivered."""
    written = (stop.batch,) if stop.replays else ()
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


def stopped_text(stop: StopPoint, checkpoint: Path) -> str:
    """What a stopped leg left, for the run's report."""
    if stop.kind == "after_batch":
        return f"stopped after batch {stop.batch} committed; resumed from the checkpoint"
    planned = planned_batches(checkpoint)
    committed = set(committed_batches(checkpoint))
    assert stop.batch in planned and stop.batch not in committed
    return (
        f"died after batch {stop.batch}'s sink write, before its commit (offsets/{stop.batch} "
        f"without commits/{stop.batch}); resumed, replaying batch {stop.batch}"
    )


def check_order(stops: list[StopPoint]) -> None:
    """Stops of one run must come in batch order, one per batch."""
    for before, after in itertools.pairwise(stops):
        if after.batch <= before.batch:
            raise ValueError(
                f"stops {before} and {after} in one run: give them in batch order, one per batch"
            )
