"""The delivery report: counts, the records behind them and a per-partition picture.

A failing assertion must say what to look at: how many records were lost,
duplicated or unexpected, the first few of each with their origin, and which
offset ranges of which partition they came from. The same report can be written
as JSON (for tools) and HTML (for people).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from kafkatest.assertions.entries import (
    SHOWN_PARTITIONS,
    Entry,
    PartitionSummary,
    jsonable,
)
from kafkatest.assertions.ranges import spans_text

SHOWN_PER_CATEGORY = 5
#: The kinds of finding a report lists, each a list of `Entry` of that name, in order.
FINDINGS = ("missing", "duplicated", "unexpected", "mismatched", "out_of_order", "expected_loss")


class Report(ABC):
    """What every kafkatest report is as text: ``str(report)`` is its `message()`."""

    @abstractmethod
    def message(self) -> str:
        """The report as the failure message a test shows."""

    def __str__(self) -> str:
        return self.message()


@dataclass
class DeliveryReport(Report):
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
        """The record counts, then each kind of finding's (copies beyond the expected
        right after the duplicated records)."""
        counts = {"expected": self.expected, "seen": self.seen, "distinct": self.distinct}
        for name in FINDINGS:
            counts[name] = len(getattr(self, name))
            if name == "duplicated":
                counts["extra_copies"] = self.extra_copies
        return counts

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

    def to_dict(self) -> dict[str, Any]:
        """The whole report as JSON-ready data (every entry, nothing truncated)."""
        return {**jsonable(asdict(self)), "counts": self.counts(), "ok": self.ok}

    def write(self, directory: str | Path, name: str = "delivery-report") -> dict[str, Path]:
        """Write ``<name>.json`` and ``<name>.html`` into `directory`; returns both paths."""
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


# -- the HTML page ------------------------------------------------------------
# A self-contained HTML page for a delivery report: no scripts, no external files.
#
# Each partition is drawn as one bar of inline SVG, the seeded offsets from left to
# right, coloured by what became of them, so a lost range or a burst of duplicates
# stands out at a glance. Hovering a segment shows its offsets (SVG <title>).

BAR_WIDTH = 720
BAR_HEIGHT = 18
MIN_MARK = 2.0
SHOWN_ENTRIES = 50
COLOURS = {
    "delivered": "#2e7d32",
    "duplicated": "#f9a825",
    "lost": "#c62828",
    "expected_loss": "#9e9e9e",
}
STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
.ok { color: #2e7d32; } .failed { color: #c62828; }
table { border-collapse: collapse; } td, th { padding: 2px 10px; text-align: left; }
th { border-bottom: 1px solid #ccc; } code { font-size: 12px; }
.legend span { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; }
"""


def render_html(report: DeliveryReport) -> str:
    """The report as one HTML page (counts, per-partition bars, first records)."""
    state = "ok" if report.ok else "failed"
    verdict = "held" if report.ok else "failed: " + ", ".join(report.failures)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>kafkatest {escape(report.guarantee)} report</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1 class='{state}'>{escape(report.guarantee)} delivery {escape(verdict)}</h1>",
        f"<p>Matched on <code>{escape(report.matched_on)}</code>.</p>",
        _counts_table(report),
    ]
    if report.partitions:
        parts.append("<h2>Per partition</h2>")
        parts.append(_legend())
        parts += [_partition(p) for p in report.partitions]
    for name in FINDINGS:
        entries: list[Entry] = getattr(report, name)
        if entries:
            parts.append(_entries(name, entries, name in report.failures))
    if report.explanation:
        items = "".join(f"<li><code>{escape(line)}</code></li>" for line in report.explanation)
        parts.append(f"<h2>Why</h2><ul>{items}</ul>")
    if report.requests:
        parts.append(request_timeline(report.requests))
    parts.append("</body></html>")
    return "\n".join(parts)


def _counts_table(report: DeliveryReport) -> str:
    rows = "".join(
        f"<tr><th>{escape(name.replace('_', ' '))}</th><td>{count}</td></tr>"
        for name, count in report.counts().items()
    )
    return f"<table>{rows}</table>"


def _legend() -> str:
    items = "".join(
        f"<span style='background:{colour}'></span>{escape(name.replace('_', ' '))}"
        for name, colour in COLOURS.items()
    )
    return f"<p class='legend'>{items}</p>"


def _partition(summary: PartitionSummary) -> str:
    # Delivered runs first, the others over them at least MIN_MARK wide, so that
    # one lost record among 100k still shows.
    total = max(summary.seeded, 1)
    below: list[str] = []
    above: list[str] = []
    done = 0
    for status, first, last, count in summary.segments:
        x, width = BAR_WIDTH * done / total, BAR_WIDTH * count / total
        done += count
        label = f"{status.replace('_', ' ')}: offsets {first}-{last} ({count})"
        if status != "delivered":
            width = max(width, MIN_MARK)
        (below if status == "delivered" else above).append(
            f"<rect x='{min(x, BAR_WIDTH - width):.2f}' y='0' width='{width:.2f}' "
            f"height='{BAR_HEIGHT}' fill='{COLOURS[status]}'><title>{escape(label)}</title></rect>"
        )
    rects = below + above
    svg = (
        f"<svg width='{BAR_WIDTH}' height='{BAR_HEIGHT}' role='img' "
        f"aria-label='{escape(summary.topic)} partition {summary.partition}'>{''.join(rects)}</svg>"
    )
    detail = (
        f"seeded {spans_text(summary.offsets)} ({summary.seeded}); "
        f"delivered {spans_text(summary.delivered)}; duplicated {spans_text(summary.duplicated)}; "
        f"lost {spans_text(summary.lost)}"
    )
    if summary.expected_loss:
        detail += f"; lost as expected {spans_text(summary.expected_loss)}"
    title = f"{summary.topic}[{summary.partition}]"
    return f"<h3><code>{escape(title)}</code></h3>{svg}<p><code>{escape(detail)}</code></p>"


def _entries(name: str, entries: list[Entry], failing: bool) -> str:
    note = "" if failing else " (allowed)"
    heading = f"{name.replace('_', ' ')}{note}: {len(entries)}"
    if len(entries) > SHOWN_ENTRIES:
        heading += f" (first {SHOWN_ENTRIES} shown; all are in the JSON report)"
    items = "".join(f"<li><code>{escape(e.line())}</code></li>" for e in entries[:SHOWN_ENTRIES])
    return f"<h2>{escape(heading)}</h2><ul>{items}</ul>"


TIMELINE_ROW = 16
TIMELINE_LABEL = 260


def request_timeline(requests: list[dict[str, Any]]) -> str:
    """What the job asked the broker, drawn as one row per API and client, a tick per
    request at its time on the broker's clock (in arrival order when the clock stood
    still), red when the answer carried an error; hovering a tick shows its details."""
    rows: dict[tuple[str, str], int] = {}
    for item in requests:
        rows.setdefault((str(item.get("api")), str(item.get("client_id"))), len(rows))
    times = [int(item.get("time_ms") or 0) for item in requests]
    span = max(times) - min(times)
    width = BAR_WIDTH - TIMELINE_LABEL
    ticks: list[str] = []
    labels: list[str] = []
    for (api, client), row in rows.items():
        labels.append(
            f"<text x='0' y='{row * TIMELINE_ROW + 12}' font-size='11'>"
            f"{escape(api)} {escape(client)}</text>"
        )
    for index, item in enumerate(requests):
        share = (times[index] - min(times)) / span if span else index / max(len(requests) - 1, 1)
        row = rows[(str(item.get("api")), str(item.get("client_id")))]
        errors = list(item.get("error_codes") or ())
        detail = f"{item.get('api')} v{item.get('version')} from {item.get('client_id')}"
        detail += f" at {times[index]} ms, connection {item.get('connection')}"
        if item.get("isolation_level"):
            detail += f", {item['isolation_level']}"
        if errors:
            detail += ", errors " + ", ".join(map(str, errors))
        colour = COLOURS["lost"] if errors else COLOURS["delivered"]
        ticks.append(
            f"<rect x='{TIMELINE_LABEL + share * (width - MIN_MARK):.2f}' "
            f"y='{row * TIMELINE_ROW + 2}' width='{MIN_MARK}' height='{TIMELINE_ROW - 4}' "
            f"fill='{colour}'><title>{escape(detail)}</title></rect>"
        )
    height = len(rows) * TIMELINE_ROW
    svg = (
        f"<svg class='requests' width='{BAR_WIDTH}' height='{height}' role='img' "
        f"aria-label='requests to the broker'>{''.join(labels + ticks)}</svg>"
    )
    heading = f"What the job asked the broker: {len(requests)} requests"
    return f"<h2>{escape(heading)}</h2>{svg}"
