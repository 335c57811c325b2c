"""The records behind a delivery report's counts, and how a row is shown.

An `Entry` is one record a check found missing, duplicated, unexpected or different;
a `PartitionSummary` is what became of one partition's seeded offsets, as compact
ranges. Both render themselves as one line of the report's message (rows cut to
`ROW_TEXT_LIMIT` by `short`); `jsonable` turns rows into JSON for the report files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kafkatest.assertions.ranges import Span, spans_text
from kafkatest.seeding.result import Origin

SHOWN_PARTITIONS = 10
SHOWN_SPANS = 8
ROW_TEXT_LIMIT = 160


@dataclass(frozen=True)
class Entry:
    """One record behind a count: its identity, origin and what the sink did with it."""

    id: str
    origin: Origin | None
    expected: int
    seen: int
    row: Any
    seen_at: tuple[str, ...] = ()
    detail: str = ""
    #: The seeded copies of an identity seeded more than once on purpose: a sink row
    #: with this identity came from one of them.
    copies: tuple[Origin, ...] = ()

    def line(self) -> str:
        parts = [f"id {self.id}"]
        if self.copies:
            parts.append(f"seeded {len(self.copies)}x at {', '.join(map(str, self.copies))}")
        elif self.origin is not None:
            parts.append(f"from {self.origin}")
        if self.seen_at:
            parts.append(f"seen {self.seen}x at {', '.join(self.seen_at[:4])}")
            if len(self.seen_at) > 4:
                parts[-1] += ", ..."
        if self.detail:
            parts.append(self.detail)
        parts.append(short(self.row))
        return " ".join(parts)


@dataclass(frozen=True)
class PartitionSummary:
    """What became of the seeded offsets of one partition, as compact ranges."""

    topic: str
    partition: int
    seeded: int
    offsets: tuple[Span, ...]
    delivered: tuple[Span, ...]
    duplicated: tuple[Span, ...]
    lost: tuple[Span, ...]
    expected_loss: tuple[Span, ...]
    #: (status, first offset, last offset, records) runs, in offset order, for drawing.
    segments: tuple[tuple[str, int, int, int], ...]
    #: The partition's log start and end offsets when the report was made (None: unknown).
    log_start: int | None = None
    log_end: int | None = None
    #: Lost records whose offsets lie below the log start: the broker deleted them.
    lost_below_log_start: int = 0

    def line(self) -> str:
        text = (
            f"{self.topic}[{self.partition}]: seeded {spans_text(self.offsets, SHOWN_SPANS)} "
            f"({self.seeded}); delivered {spans_text(self.delivered, SHOWN_SPANS)}"
        )
        if self.duplicated:
            text += f"; duplicated {spans_text(self.duplicated, SHOWN_SPANS)}"
        if self.lost:
            text += f"; lost {spans_text(self.lost, SHOWN_SPANS)}"
        if self.expected_loss:
            text += f"; lost as expected {spans_text(self.expected_loss, SHOWN_SPANS)}"
        if self.log_start is not None and self.log_end is not None:
            text += f"; log now holds offsets [{self.log_start}, {self.log_end})"
        if self.lost_below_log_start:
            text += (
                f" ({self.lost_below_log_start} lost records lie below the log start: the "
                "broker deleted them (retention, delete_records, a recreated topic) before "
                "the job read them, which is not the job's loss; seeded timestamps older than "
                "retention.ms age out at once)"
            )
        return text


def short(value: Any, limit: int = ROW_TEXT_LIMIT) -> str:
    """A one-line rendering of a row, cut to `limit` characters."""
    text = json.dumps(jsonable(value), sort_keys=False, default=str, separators=(", ", ": "))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def jsonable(value: Any) -> Any:
    """Rows hold bytes, datetimes and tuples; JSON wants text, numbers, lists, dicts."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if hasattr(value, "_asdict"):
        return jsonable(value._asdict())
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)
