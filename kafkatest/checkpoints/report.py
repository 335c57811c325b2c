"""Which batches a restarted query ran again, and which records that sent to the sink twice
or skipped, after a checkpoint fault.

A checkpoint fault's damage shows in offsets, not in files: the records below the last
committed batch's end offsets had reached the sink before the fault; a restarted batch
reading below them reads them again (a replay), and one starting above them leaves a gap
nobody read (a loss). `delivered_offsets` takes the first from the checkpoint before the
fault; the restarted query's progress gives the second.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkatest.checkpoints.damage import Damage
from kafkatest.checkpoints.logs import (
    TopicOffsets,
    committed_batches,
    parse_source_offsets,
    planned_offsets,
)

Span = tuple[int, int]


def delivered_offsets(checkpoint: str | os.PathLike[str]) -> TopicOffsets:
    """Per source partition, the offset below which every record reached the sink (the
    latest committed batch's end offsets)."""
    root = Path(checkpoint)
    committed = committed_batches(root)
    return planned_offsets(root, committed[-1]) if committed else {}


@dataclass(frozen=True)
class BatchRun:
    """One batch the restarted query ran: what it read, and the part read before."""

    batch: int
    read: dict[tuple[str, int], Span]
    #: Offsets this batch read that the sink had received before the fault.
    again: dict[tuple[str, int], Span] = field(default_factory=dict)

    @property
    def replayed_records(self) -> int:
        return sum(end - start for start, end in self.again.values())


@dataclass(frozen=True)
class ReplayReport:
    """The restarted query's batches, set against what the sink had before the fault."""

    fault: str
    runs: tuple[BatchRun, ...]
    #: Offsets nobody read: between what was delivered and where the restart began.
    skipped: dict[tuple[str, int], Span]

    @property
    def replayed_batches(self) -> list[int]:
        return [run.batch for run in self.runs if run.again]

    @property
    def replayed_records(self) -> int:
        return sum(run.replayed_records for run in self.runs)

    @property
    def skipped_records(self) -> int:
        return sum(end - start for start, end in self.skipped.values())

    def __str__(self) -> str:
        lines = [f"after {self.fault}:"]
        for run in self.runs:
            read = ", ".join(_span(tp, span) for tp, span in sorted(run.read.items()))
            again = ", ".join(_span(tp, span) for tp, span in sorted(run.again.items()))
            note = f"; replayed {again} ({run.replayed_records} records)" if run.again else ""
            lines.append(f"  batch {run.batch} read {read or 'nothing'}{note}")
        for tp, span in sorted(self.skipped.items()):
            lines.append(f"  skipped {_span(tp, span)} ({span[1] - span[0]} records never read)")
        if not self.runs:
            lines.append("  the restarted query ran no batch")
        return "\n".join(lines)


def replay_report(
    delivered: Mapping[tuple[str, int], int],
    progress: Iterable[Any],
    damage: Damage | str = "the fault",
) -> ReplayReport:
    """Set the restarted query's batches (`progress`: its ``recentProgress``) against the
    offsets `delivered_offsets` read before the fault."""
    runs = []
    first_start: dict[tuple[str, int], int] = {}
    for entry in progress:
        batch, read = _batch_read(entry)
        if not read:
            continue
        for tp, (start, _) in read.items():
            first_start.setdefault(tp, start)
        again = {
            tp: (start, min(end, delivered[tp]))
            for tp, (start, end) in read.items()
            if tp in delivered and start < min(end, delivered[tp])
        }
        runs.append(BatchRun(batch, read, again))
    skipped = {
        tp: (delivered[tp], start)
        for tp, start in first_start.items()
        if tp in delivered and start > delivered[tp]
    }
    fault = damage.fault if isinstance(damage, Damage) else damage
    return ReplayReport(fault, tuple(runs), skipped)


def _batch_read(entry: Any) -> tuple[int, dict[tuple[str, int], Span]]:
    """A progress entry's batch id and the offsets each source partition read in it."""
    data = json.loads(entry.json) if hasattr(entry, "json") else dict(entry)
    read: dict[tuple[str, int], Span] = {}
    for source in data.get("sources") or []:
        start = _offsets(source.get("startOffset"))
        for tp, end in _offsets(source.get("endOffset")).items():
            if end > start.get(tp, end):
                read[tp] = (start[tp], end)
    return int(data.get("batchId", -1)), read


def _offsets(value: Any) -> TopicOffsets:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return parse_source_offsets(value) if isinstance(value, dict) else {}


def _span(tp: tuple[str, int], span: Span) -> str:
    return f"{tp[0]}[{tp[1]}] offsets {span[0]}-{span[1] - 1}"
