"""The delivery report: counts, the records behind them and a per-partition picture.

A failing assertion must say what to look at: how many records were lost,
duplicated or unexpected, the first few of each with their origin, and which
offset ranges of which partition they came from. The same report can be written
as JSON (for tools) and HTML (for people).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kafkatest.assertions.ranges import Span, spans_text
from kafkatest.seeding.result import Origin

SHOWN_PER_CATEGORY = 5
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


@dataclass
class DeliveryReport:
    """Everything an assertion found; `failures` names what broke the guarantee."""

    guarantee: str
    matched_on: str
    expected: int
    seen: int
    distinct: int
    missing: list[Entry] = field(default_factory=list)
    duplicated: list[Entry] = field(default_factory=list)
    unexpected: list[Entry] = field(default_factory=list)
    mismatched: list[Entry] = field(default_factory=list)
    out_of_order: list[Entry] = field(default_factory=list)
    expected_loss: list[Entry] = field(default_factory=list)
    partitions: list[PartitionSummary] = field(default_factory=list)
    failures: tuple[str, ...] = ()
    #: What the job asked the broker during the test, when its broker logged requests
    #: (the pytest plugin fills it in for a failed test): one dict per request with
    #: time_ms, api, version, client_id, connection, isolation_level, error_codes.
    requests: list[dict[str, Any]] = field(default_factory=list)
    #: Why, when the assertion was given a checkpoint fault's `RestartExplanation`
    #: (``explain=``): a sentence per duplicated or lost range, then the fault, the
    #: checkpoint's logs around it and each batch the restart ran.
    explanation: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def extra_copies(self) -> int:
        return sum(e.seen - e.expected for e in self.duplicated)

    def counts(self) -> dict[str, int]:
        return {
            "expected": self.expected,
            "seen": self.seen,
            "distinct": self.distinct,
            "missing": len(self.missing),
            "duplicated": len(self.duplicated),
            "extra_copies": self.extra_copies,
            "unexpected": len(self.unexpected),
            "mismatched": len(self.mismatched),
            "out_of_order": len(self.out_of_order),
            "expected_loss": len(self.expected_loss),
        }

    def message(self) -> str:
        """The text of the assertion error: counts, first records, partitions."""
        verdict = (
            "held"
            if self.ok
            else "failed: "
            + ", ".join(
                f"{len(getattr(self, name))} {name.replace('_', ' ')}" for name in self.failures
            )
        )
        c = self.counts()
        lines = [
            f"{self.guarantee} delivery {verdict}",
            f"  expected {c['expected']}, seen {c['seen']}, distinct {c['distinct']}, "
            f"missing {c['missing']}, duplicated {c['duplicated']} "
            f"(+{c['extra_copies']} copies), unexpected {c['unexpected']}"
            + (f", mismatched {c['mismatched']}" if c["mismatched"] else "")
            + (f", out of order {c['out_of_order']}" if c["out_of_order"] else "")
            + (f", lost as expected {c['expected_loss']}" if c["expected_loss"] else ""),
            f"  matched on {self.matched_on}",
        ]
        for name in ("missing", "duplicated", "unexpected", "mismatched", "out_of_order"):
            entries: list[Entry] = getattr(self, name)
            if not entries:
                continue
            note = "" if name in self.failures else " (allowed)"
            shown = entries[:SHOWN_PER_CATEGORY]
            lines.append(
                f"{name.replace('_', ' ')}{note}: first {len(shown)} of {len(entries)}"
                if len(entries) > len(shown)
                else f"{name.replace('_', ' ')}{note}: {len(entries)}"
            )
            lines += [f"  - {entry.line()}" for entry in shown]
        if self.partitions:
            lines.append("per partition (seeded offsets):")
            lines += [f"  {p.line()}" for p in self.partitions[:SHOWN_PARTITIONS]]
            if len(self.partitions) > SHOWN_PARTITIONS:
                lines.append(f"  ... {len(self.partitions) - SHOWN_PARTITIONS} more partitions")
        if self.explanation:
            lines.append("why:")
            lines += [f"  {line}" for line in self.explanation]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.message()

    def to_dict(self) -> dict[str, Any]:
        """The whole report as JSON-ready data (every entry, nothing truncated)."""
        data = jsonable(asdict(self))
        data["counts"] = self.counts()
        data["ok"] = self.ok
        return data

    def write(self, directory: str | Path, name: str = "delivery-report") -> dict[str, Path]:
        """Write ``<name>.json`` and ``<name>.html`` into `directory`; returns both paths."""
        from kafkatest.assertions.report_html import render_html

        return write_report_files(directory, name, self.to_dict(), render_html(self))


def write_report_files(
    directory: str | Path, name: str, data: dict[str, Any], html: str
) -> dict[str, Path]:
    """``<name>.json`` and ``<name>.html`` written into `directory` (made if missing):
    the one shape every kafkatest report takes on disk."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"json": folder / f"{name}.json", "html": folder / f"{name}.html"}
    paths["json"].write_text(json.dumps(data, indent=2), encoding="utf-8")
    paths["html"].write_text(html, encoding="utf-8")
    return paths


class DeliveryAssertionError(AssertionError):
    """A delivery guarantee did not hold; `.report` holds the full `DeliveryReport`."""

    def __init__(self, report: DeliveryReport) -> None:
        super().__init__(report.message())
        self.report = report


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
