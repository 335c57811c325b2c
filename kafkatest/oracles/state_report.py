"""What the bounded-state oracle saw: each stateful operator's rows after each batch,
its verdict, and the rows it never evicted.

A failure must name the operator (what Spark calls it, the plan's node and its
operator id), show the numbers the verdict was taken on, and show rows that stayed:
the keys a dedup or a join side keeps forever are what a reader recognises as the bug.
Written as JSON and HTML under ``kafkatest-reports/`` like the other oracles' reports.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from kafkatest.assertions.report import STYLE, Report, jsonable
from kafkatest.oracles.report import OracleAssertionError


def grows(rows: list[int], warmup: int) -> bool:
    """The verdict on one operator: after the first `warmup` batches its state must
    never hold more rows than the most it held during them (a plateau); state that
    keeps every key sets a new high with each batch of new keys."""
    return max(rows[warmup:]) > max(rows[:warmup])


@dataclass
class Leg:
    """One batch of the stream: the query started, read it, and stopped."""

    index: int
    batch_ids: list[int]
    input_rows: int
    #: The watermark after the leg and the latest event time it read (ISO text; '' none).
    watermark: str = ""
    event_time_max: str = ""


@dataclass
class OperatorState:
    """One stateful operator's rows after each leg, and the verdict on them."""

    position: int
    name: str
    node: str = "?"
    op_id: int | None = None
    #: Rows held when each leg ended (after its last batch: evictions done).
    rows: list[int] = field(default_factory=list)
    #: The most rows held within each leg (before the eviction its last batch did).
    peaks: list[int] = field(default_factory=list)
    removed: list[int] = field(default_factory=list)
    #: What the plan says about evicting this state ('' when nothing).
    eviction: str = ""
    grows: bool = False
    #: Rows held at the end of the warm-up and still held at the end (a sample), how
    #: many there were, and why none were read ('' when they were).
    kept: list[dict[str, Any]] = field(default_factory=list)
    kept_count: int | None = None
    kept_of: int | None = None
    kept_unread: str = ""

    def title(self) -> str:
        where = f"{self.node}, opId {self.op_id}" if self.op_id is not None else self.node
        return f"operator {self.position} {self.name} ({where})"

    def lines(self, warmup: int) -> list[str]:
        shown = (
            " ".join(map(str, self.rows[:warmup])) + " | " + " ".join(map(str, self.rows[warmup:]))
        )
        lines = [
            f"  {self.title()}: rows after each batch {shown} (warm-up | judged); "
            f"removed {sum(self.removed)} in all"
        ]
        top = max(self.rows[:warmup])
        if self.grows:
            last = len(self.rows) - 1
            lines.append(
                f"    grows: {max(self.rows[warmup:])} rows after batch "
                f"{self.rows.index(max(self.rows[warmup:]), warmup)} (of 0-{last}), above "
                f"its warm-up peak of {top}"
                + ("; no row was ever removed" if not any(self.removed) else "")
            )
        else:
            lines.append(f"    bounded: never above its warm-up peak of {top} after it")
        if self.eviction:
            lines.append(f"    the plan: {self.eviction}")
        if self.kept_count is not None:
            lines.append(
                f"    never evicted: {self.kept_count} of the {self.kept_of} rows held after "
                f"batch {warmup - 1} are still held after the last"
                + (", e.g.:" if self.kept else "")
            )
            lines += [f"      {_row_text(row)}" for row in self.kept]
        elif self.kept_unread and self.grows:
            lines.append(f"    rows never evicted not read: {self.kept_unread}")
        return lines


@dataclass
class StateReport(Report):
    """What `assert_state_bounded` ran and found; `ok` when every operator levelled off."""

    job: str
    batches: int
    warmup: int
    records_per_batch: int = 0
    partitions: int = 0
    seconds: float = 0.0
    legs: list[Leg] = field(default_factory=list)
    operators: list[OperatorState] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Why the oracle does not apply ('' when it does): the query keeps no state.
    not_applicable: str = ""
    oracle: str = "bounded state"

    @property
    def ok(self) -> bool:
        return not any(op.grows for op in self.operators)

    def message(self) -> str:
        growing = [op for op in self.operators if op.grows]
        if self.not_applicable:
            verdict = f"not applicable: {self.not_applicable}"
        elif growing:
            names = ", ".join(f"operator {op.position} ({op.name})" for op in growing)
            verdict = f"failed: the state of {names} grows with the stream"
        else:
            verdict = (
                f"held: {len(self.operators)} stateful operator(s) levelled off after the warm-up"
            )
        lines = [
            f"{self.oracle} {verdict}",
            f"  job {self.job}; {len(self.legs)} batches of {self.records_per_batch} records "
            f"in {self.partitions} partitions; warm-up {self.warmup} batches; the job ran "
            f"{self.seconds:.1f}s",
        ]
        for op in self.operators:
            lines += op.lines(self.warmup)
        marks = [leg.watermark or "-" for leg in self.legs]
        if any(leg.watermark for leg in self.legs):
            lines.append(f"  watermark after each batch: {', '.join(marks)}")
        elif self.operators:
            lines.append("  watermark after each batch: none (Spark reported no watermark)")
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {**jsonable(asdict(self)), "ok": self.ok}

    def write(self, directory: str | Path, name: str = "state-report") -> dict[str, Path]:
        """Write ``<name>.json`` and ``<name>.html`` into `directory`; returns both paths."""
        from kafkatest.assertions.report import write_report_files

        return write_report_files(directory, name, self.to_dict(), render_html(self))


class StateAssertionError(OracleAssertionError):
    """A stateful operator's state grew with the stream; `.report` is the `StateReport`."""


def _row_text(row: dict[str, Any]) -> str:
    text = json.dumps(jsonable(row), sort_keys=True, separators=(", ", ": "))
    return text if len(text) <= 160 else text[:157] + "..."


def render_html(report: StateReport) -> str:
    """The report as one HTML page: the verdict, then each operator's rows per batch."""
    state = "ok" if report.ok else "failed"
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>kafkatest {escape(report.oracle)} report</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1 class='{state}'>{escape(report.oracle)} {'held' if report.ok else 'failed'}</h1>",
        f"<pre>{escape(report.message())}</pre>",
        "<table><tr><th>batch</th><th>batch ids</th><th>input rows</th><th>watermark</th>",
    ]
    parts += [f"<th>{escape(op.title())}</th>" for op in report.operators]
    parts.append("</tr>")
    for leg in report.legs:
        cells = [str(leg.index), ", ".join(map(str, leg.batch_ids)), str(leg.input_rows)]
        cells.append(leg.watermark or "-")
        cells += [
            str(op.rows[leg.index]) if leg.index < len(op.rows) else "-" for op in report.operators
        ]
        parts.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
    parts.append("</table></body></html>")
    return "".join(parts)
