"""What a checkpoint fault did to a restarted query, read from the checkpoint alone.

A delivery report that says "records 6-8 were duplicated" leaves the engineer to find out
why. After a checkpoint fault the answer is in the checkpoint: its offsets log
(``offsets/N``: the end offsets batch N planned per source partition) and commit log
(``commits/N``: batch N reached the sink) before the fault, right after it, and after the
restart. Comparing the three says which batches the restarted query ran again with the
offsets it had planned (a replay), ran again with other offsets (re-planned), or planned
anew, which records each read that the sink had already received, and which offsets no
batch read (a loss). Reading files instead of the query's progress works for a job in
another process, a scenario, an oracle run, or a job run by hand::

    recorded = record_checkpoint_fault(checkpoint, "crash-before-commit")
    ...  # restart the job on `checkpoint` and let it run
    explanation = recorded.explain()
    assert_exactly_once(expected, sink_rows, explain=explanation)
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kafkatest.checkpoints.catalog import apply_checkpoint_fault
from kafkatest.checkpoints.damage import Damage
from kafkatest.checkpoints.layout import require_checkpoint, source_entries
from kafkatest.checkpoints.logs import (
    TopicOffsets,
    committed_batches,
    parse_source_offsets,
    planned_batches,
    planned_offsets,
)

TopicPartition = tuple[str, int]
#: A half-open offset range ``[start, end)``.
Span = tuple[int, int]
#: An inclusive offset range ``(first, last)``, as delivery reports give them.
InclusiveSpan = tuple[int, int]

#: What a batch of the restarted query was, set against the log before the fault.
REPLAYED, REPLANNED, NEW = "replayed", "re-planned", "new"


@dataclass(frozen=True)
class LogEntry:
    """One planned batch: where each source partition started and ended, and whether its
    commit was written (and when: a rewritten commit is a batch run again)."""

    batch: int
    start: TopicOffsets
    end: TopicOffsets
    committed: bool
    #: ``commits/N``'s modification time (ns), to see a commit written again; None: none.
    commit_stamp: int | None = None
    #: ``offsets/N``'s modification time (ns), to see a batch planned again.
    offsets_stamp: int | None = None

    def read(self) -> dict[TopicPartition, Span]:
        """The offsets this batch read, per source partition (empty ranges left out)."""
        return {
            tp: (self.start[tp], end)
            for tp, end in self.end.items()
            if tp in self.start and end > self.start[tp]
        }


@dataclass(frozen=True)
class LogSnapshot:
    """A checkpoint's offsets and commit logs at one moment."""

    entries: dict[int, LogEntry] = field(default_factory=dict)
    #: Batches whose rows reached the sink though they have no commit (a crash between
    #: the sink write and the commit): they count as delivered.
    written: frozenset[int] = frozenset()

    @classmethod
    def read(cls, checkpoint: str | os.PathLike[str], written: Iterable[int] = ()) -> LogSnapshot:
        """The logs of `checkpoint` now; `written`: batches known to have reached the
        sink without a commit."""
        root = Path(checkpoint)
        committed = set(committed_batches(root))
        initial = initial_offsets(root)
        entries: dict[int, LogEntry] = {}
        previous: TopicOffsets = {}
        for batch in planned_batches(root):
            end = planned_offsets(root, batch)
            # Batch 0 starts at the initial offsets, any other where the batch planned
            # before it ended (batch N-1, or the last one before a gap in the log).
            start = dict(initial if batch == 0 else previous)
            for tp in end:
                # A partition added since (or unknown at batch 0): it started at 0.
                start.setdefault(tp, initial.get(tp, 0))
            entries[batch] = LogEntry(
                batch,
                start,
                end,
                batch in committed,
                _stamp(root / "commits" / str(batch)),
                _stamp(root / "offsets" / str(batch)),
            )
            previous = end
        return cls(entries, frozenset(written))

    @property
    def delivered(self) -> list[int]:
        """Batches whose rows reached the sink: committed, or known written."""
        return sorted(b for b, e in self.entries.items() if e.committed or b in self.written)

    def delivered_spans(self) -> dict[TopicPartition, Span]:
        """Per source partition, the offsets the sink had received from these batches."""
        spans: dict[TopicPartition, Span] = {}
        for batch in self.delivered:
            for tp, (start, end) in self.entries[batch].read().items():
                low, high = spans.get(tp, (start, end))
                spans[tp] = (min(low, start), max(high, end))
        return spans

    def text(self) -> str:
        """``offsets 0-2, commits 0-1``: which batches each log holds."""
        planned = sorted(self.entries)
        committed = [b for b in planned if self.entries[b].committed]
        return f"offsets {_ids(planned)}, commits {_ids(committed)}"


def initial_offsets(checkpoint: Path) -> TopicOffsets:
    """The first source's initial offsets (``sources/0/0``), where batch 0 started.

    Spark writes a version line and one JSON object (the Kafka source's file starts with
    a NUL byte, a relic of Spark 2.1); an unreadable file gives nothing.
    """
    entries = source_entries(checkpoint)
    if not entries:
        return {}
    try:
        text = entries[0].read_bytes().decode("utf-8", errors="replace").lstrip("\x00")
    except OSError:
        return {}
    for line in text.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            return {tp: max(offset, 0) for tp, offset in parse_source_offsets(data).items()}
    return {}


@dataclass(frozen=True)
class BatchOutcome:
    """One batch the restarted query ran, and what it did to the sink."""

    batch: int
    #: `REPLAYED` (run again with the offsets it had planned), `REPLANNED` (run again
    #: with other offsets) or `NEW` (a batch id the log did not hold before the fault).
    kind: str
    read: dict[TopicPartition, Span]
    #: The part of `read` the sink had received before the fault: written twice.
    again: dict[TopicPartition, Span]
    #: Whether its commit was written (False: the query stopped or failed in it).
    committed: bool
    #: Why it ran again ("commits/2 was deleted"), empty for a new batch.
    cause: str = ""

    @property
    def records_again(self) -> int:
        return sum(end - start for start, end in self.again.values())

    def line(self) -> str:
        read = ", ".join(span_text(tp, span) for tp, span in sorted(self.read.items()))
        text = f"batch {self.batch} ({self.kind}) read {read or 'nothing'}"
        if self.again:
            again = ", ".join(span_text(tp, span) for tp, span in sorted(self.again.items()))
            text += f"; {again} had reached the sink before ({self.records_again} records again)"
        if not self.committed:
            text += "; not committed (the query stopped or failed in it)"
        return text + (f"; {self.cause}" if self.cause else "")


@dataclass(frozen=True)
class RestartExplanation:
    """A checkpoint fault, the logs around it, and what the restarted query did."""

    damage: Damage
    before: LogSnapshot
    after_fault: LogSnapshot
    after_restart: LogSnapshot
    runs: tuple[BatchOutcome, ...]
    #: Offsets the sink had not received and no batch of the restart read: lost.
    skipped: dict[TopicPartition, Span]

    @property
    def replayed_batches(self) -> list[int]:
        """Batches the restart ran again (same id), with the offsets planned or others."""
        return [run.batch for run in self.runs if run.kind in (REPLAYED, REPLANNED)]

    @property
    def new_batches(self) -> list[int]:
        return [run.batch for run in self.runs if run.kind == NEW]

    @property
    def records_again(self) -> int:
        return sum(run.records_again for run in self.runs)

    @property
    def skipped_records(self) -> int:
        return sum(end - start for start, end in self.skipped.values())

    def lines(self) -> list[str]:
        """The fault, the logs before and after it and after the restart, each batch."""
        lines = [
            f"checkpoint fault {self.damage}",
            f"  logs before the fault: {self.before.text()}; after it: {self.after_fault.text()}; "
            f"after the restart: {self.after_restart.text()}",
        ]
        lines += [f"  {run.line()}" for run in self.runs]
        if not self.runs:
            lines.append("  the restarted query completed no batch")
        for tp, span in sorted(self.skipped.items()):
            lines.append(
                f"  skipped {span_text(tp, span)} ({span[1] - span[0]} records no batch read)"
            )
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def why(
        self,
        duplicated: Mapping[TopicPartition, Iterable[InclusiveSpan]] | None = None,
        lost: Mapping[TopicPartition, Iterable[InclusiveSpan]] | None = None,
    ) -> list[str]:
        """One sentence per duplicated or lost range a delivery report found ("records
        6-8 of in[0] were written twice: batch 2 was replayed after commits/2 was
        deleted"); ranges are inclusive, as reports give them. A range this fault does
        not account for is said to be so, not passed over."""
        out: list[str] = []
        for tp, spans in sorted((duplicated or {}).items()):
            out += [self._duplicate_sentence(tp, first, last) for first, last in spans]
        for tp, spans in sorted((lost or {}).items()):
            out += [self._loss_sentence(tp, first, last) for first, last in spans]
        return out

    def _duplicate_sentence(self, tp: TopicPartition, first: int, last: int) -> str:
        where = f"{_records(first, last)} of {tp[0]}[{tp[1]}]"
        causes: list[tuple[int, int, str]] = []
        for run in self.runs:
            span = run.again.get(tp)
            if span is None or span[0] > last or span[1] <= first:
                continue
            why = f" after {run.cause}" if run.cause else ""
            low, high = max(first, span[0]), min(last, span[1] - 1)
            causes.append((low, high, f"batch {run.batch} was {run.kind}{why}"))
        if not causes:
            return f"{where} were written twice; no batch of the restart read them again"
        if len(causes) == 1 and causes[0][:2] == (first, last):
            return f"{where} were written twice: {causes[0][2]}"
        parts = "; ".join(f"{_records(low, high)}: {text}" for low, high, text in causes)
        return f"{where} were written twice: {parts}"

    def _loss_sentence(self, tp: TopicPartition, first: int, last: int) -> str:
        where = f"{_records(first, last)} of {tp[0]}[{tp[1]}]"
        span = self.skipped.get(tp)
        if span is not None and span[0] <= last and span[1] > first:
            start = min((run.read[tp][0] for run in self.runs if tp in run.read), default=None)
            began = f"the restarted query began at offset {start}" if start is not None else ""
            return (
                f"{where} were never written: no batch read offsets {span[0]}-{span[1] - 1} "
                f"after {self.damage.fault}" + (f" ({began})" if began else "")
            )
        return f"{where} were never written; the restart's batches do not account for it"


@dataclass(frozen=True)
class RecordedFault:
    """A checkpoint fault applied, with the logs just before and just after it."""

    damage: Damage
    before: LogSnapshot
    after: LogSnapshot

    def explain(self, checkpoint: str | os.PathLike[str] | None = None) -> RestartExplanation:
        """What the restarted query did, from the checkpoint's logs now (by default the
        checkpoint the fault damaged)."""
        now = LogSnapshot.read(checkpoint if checkpoint is not None else self.damage.checkpoint)
        return explain_restart(self.damage, self.before, self.after, now)


def record_checkpoint_fault(
    checkpoint: str | os.PathLike[str],
    fault: str | Callable[[Path], Damage],
    *,
    written: Iterable[int] = (),
) -> RecordedFault:
    """Apply `fault` (a name of `CHECKPOINT_FAULTS`, ``rewind-to-<n>``, or a function of
    the checkpoint returning its `Damage`, such as a backup's restore) to a stopped
    query's checkpoint, reading its logs before and after: `RecordedFault.explain`
    then says what the restart did. `written`: batches that reached the sink though
    they have no commit."""
    root = require_checkpoint(Path(checkpoint))
    before = LogSnapshot.read(root, written)
    damage = apply_checkpoint_fault(root, fault) if isinstance(fault, str) else fault(root)
    return RecordedFault(damage, before, LogSnapshot.read(root, written))


def explain_restart(
    damage: Damage, before: LogSnapshot, after_fault: LogSnapshot, after_restart: LogSnapshot
) -> RestartExplanation:
    """Set the batches the restart ran (a commit written, or rewritten, since the fault;
    or planned since and never committed) against the logs before the fault."""
    delivered = before.delivered_spans()
    runs: list[BatchOutcome] = []
    for batch, entry in sorted(after_restart.entries.items()):
        earlier = after_fault.entries.get(batch)
        ran = entry.committed and (
            earlier is None or not earlier.committed or earlier.commit_stamp != entry.commit_stamp
        )
        planned_since = earlier is None or earlier.offsets_stamp != entry.offsets_stamp
        if not ran and not (planned_since and not entry.committed):
            continue
        old = before.entries.get(batch)
        if old is None:
            kind = NEW
        elif old.end == entry.end and old.start == entry.start:
            kind = REPLAYED
        else:
            kind = REPLANNED
        read = entry.read()
        again = {
            tp: (max(start, delivered[tp][0]), min(end, delivered[tp][1]))
            for tp, (start, end) in read.items()
            if tp in delivered and max(start, delivered[tp][0]) < min(end, delivered[tp][1])
        }
        cause = _cause(damage, batch) if kind != NEW or again else ""
        runs.append(BatchOutcome(batch, kind, read, again, entry.committed, cause))
    first_start: dict[TopicPartition, int] = {}
    for run in runs:
        for tp, (start, _) in run.read.items():
            first_start[tp] = min(start, first_start.get(tp, start))
    skipped = {
        tp: (delivered[tp][1], start)
        for tp, start in first_start.items()
        if tp in delivered and start > delivered[tp][1]
    }
    return RestartExplanation(damage, before, after_fault, after_restart, tuple(runs), skipped)


def _cause(damage: Damage, batch: int) -> str:
    """Why the restart ran `batch` again, in the words of the fault."""
    if damage.fault.startswith("rewind-to-"):
        return f"the checkpoint was rewound to batch {damage.fault.rsplit('-', 1)[1]}"
    if damage.fault == "restore-backup":
        return f"the checkpoint was {damage.detail or 'restored from a backup'}"
    if batch in damage.batches and damage.detail and not damage.removed:
        return damage.detail
    for log in ("commits", "offsets"):
        if f"{log}/{batch}" in damage.removed:
            return f"{log}/{batch} was deleted ({damage.fault})"
        if f"{log}/{batch}" in damage.changed:
            return f"{log}/{batch} was damaged ({damage.fault})"
    return f"{damage}"


def span_text(tp: TopicPartition, span: Span) -> str:
    """``in[0] offsets 6-8`` for the half-open span ``(6, 9)``."""
    return f"{tp[0]}[{tp[1]}] offsets {span[0]}-{span[1] - 1}"


def _records(first: int, last: int) -> str:
    return f"record {first}" if first == last else f"records {first}-{last}"


def _ids(ids: list[int]) -> str:
    """``[0, 1, 2, 5]`` as ``0-2, 5``; none as ``none``."""
    if not ids:
        return "none"
    parts: list[str] = []
    start = previous = ids[0]
    for batch in [*ids[1:], None]:
        if batch is not None and batch == previous + 1:
            previous = batch
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if batch is not None:
            start = previous = batch
    return ", ".join(parts)


def _stamp(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None
