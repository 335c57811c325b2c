"""A self-contained HTML page for a delivery report: no scripts, no external files.

Each partition is drawn as one bar of inline SVG, the seeded offsets from left to
right, coloured by what became of them, so a lost range or a burst of duplicates
stands out at a glance. Hovering a segment shows its offsets (SVG <title>).
"""

from __future__ import annotations

from html import escape

from kafkatest.assertions.ranges import spans_text
from kafkatest.assertions.report import DeliveryReport, Entry, PartitionSummary

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
    for name in (
        "missing",
        "duplicated",
        "unexpected",
        "mismatched",
        "out_of_order",
        "expected_loss",
    ):
        entries: list[Entry] = getattr(report, name)
        if entries:
            parts.append(_entries(name, entries, name in report.failures))
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
