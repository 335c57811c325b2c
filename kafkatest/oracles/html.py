"""A self-contained HTML page for an oracle report: runs, differences, inputs behind them."""

from __future__ import annotations

from html import escape

from kafkatest.assertions.html import STYLE
from kafkatest.assertions.report import short
from kafkatest.oracles.compare import RowDifference
from kafkatest.oracles.report import Comparison, OracleReport


def render_html(report: OracleReport) -> str:
    """The report as one HTML page, no scripts or external files."""
    state = "ok" if report.ok else "failed"
    verdict = "held" if report.ok else "failed"
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>kafkatest {escape(report.oracle)} report</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1 class='{state}'>{escape(report.oracle)} {verdict}</h1>",
        f"<p>Job <code>{escape(report.job)}</code>; {report.inputs} input records in "
        f"{report.partitions} partitions; the job ran {report.seconds:.1f}s in all.</p>",
        _runs(report),
    ]
    parts += [f"<p>{escape(note)}</p>" for note in report.notes]
    parts += [_comparison(c) for c in report.comparisons]
    parts.append("</body></html>")
    return "\n".join(parts)


def _runs(report: OracleReport) -> str:
    rows = []
    for run in report.runs:
        watermarks = ", ".join(f"{b.id}: {b.watermark_ms}" for b in run.batches if b.watermark_ms)
        rows.append(
            f"<tr><td>{escape(run.name)}</td><td><code>{escape(str(run.settings))}</code></td>"
            f"<td>{run.seconds:.1f}s</td><td>{len(run.batches)}</td><td>{len(run.rows)}</td>"
            f"<td><code>{escape(watermarks or '-')}</code></td>"
            f"<td>{escape('; '.join(run.legs) or '-')}</td></tr>"
        )
    head = (
        "<tr><th>run</th><th>settings</th><th>time</th><th>batches</th><th>rows</th>"
        "<th>watermark per batch (ms)</th><th>stops</th></tr>"
    )
    return f"<h2>Runs</h2><table>{head}{''.join(rows)}</table>"


def _comparison(comparison: Comparison) -> str:
    state = "ok" if comparison.ok else "failed"
    parts = [f"<h2 class='{state}'>{escape(comparison.verdict())}</h2>"]
    for side, rows in (
        (comparison.baseline, comparison.only_in_baseline),
        (comparison.other, comparison.only_in_other),
    ):
        if rows:
            parts.append(f"<h3>Only in {escape(side)}: {len(rows)}</h3><ul>")
            parts += [_row(diff) for diff in rows]
            parts.append("</ul>")
    if comparison.late:
        parts.append("<h3>Records behind the watermark in one run only</h3><ul>")
        parts += [f"<li><code>{escape(late.line())}</code></li>" for late in comparison.late]
        parts.append("</ul>")
    return "\n".join(parts)


def _row(diff: RowDifference) -> str:
    inputs = "".join(f"<li><code>{escape(text)}</code></li>" for text in diff.related)
    how = f"<p>inputs with {escape(diff.how_related)}:</p><ul>{inputs}</ul>" if inputs else ""
    return f"<li><code>{escape(short(diff.row, 400))}</code>{how}</li>"
