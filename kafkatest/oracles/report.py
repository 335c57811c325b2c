"""The oracle report: the runs, what differed between them, and the inputs behind it.

A failed oracle must say which two runs disagree, the rows only one of them
wrote, and which input records those rows come from (with the records the
watermark made late in one run only), so that a reader can tell a job's bug from
Spark's documented handling of late data. Written as JSON (tools) and HTML
(people) under ``kafkatest-reports/`` beside the delivery reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from kafkatest.assertions.entries import jsonable, short
from kafkatest.assertions.report import STYLE, Report
from kafkatest.checkpoints.explain import RestartExplanation
from kafkatest.oracles.compare import Lateness, RowDifference
from kafkatest.oracles.runs import RunResult

SHOWN_ROWS = 5
SHOWN_LATE = 8


@dataclass
class Comparison:
    """One run against the baseline run: matched rows and rows only one of them wrote."""

    baseline: str
    other: str
    duplicates: str
    matched: int
    only_in_baseline: list[RowDifference] = field(default_factory=list)
    only_in_other: list[RowDifference] = field(default_factory=list)
    late: list[Lateness] = field(default_factory=list)
    allow_late: bool = False
    #: Rows each run's sink held, as compared (after any replayed first attempt left out).
    rows_baseline: int = 0
    rows_other: int = 0
    #: Rows of the other run left out as a replayed batch's first attempt (at-least-once).
    replayed: int = 0

    @property
    def differs(self) -> bool:
        return bool(self.only_in_baseline or self.only_in_other)

    @property
    def excused(self) -> list[RowDifference]:
        """Differing rows that records behind the watermark in one run only explain."""
        return [r for r in self.only_in_baseline + self.only_in_other if r.excuse]

    @property
    def explained_by_late_data(self) -> bool:
        """Every differing row is explained by records late in one run only (see
        `kafkatest.oracles.excuses`: missing, or smaller by what they held)."""
        rows = self.only_in_baseline + self.only_in_other
        return bool(rows) and all(r.excuse for r in rows)

    @property
    def ok(self) -> bool:
        return not self.differs or (self.allow_late and self.explained_by_late_data)

    def title(self) -> str:
        return (
            f"{self.baseline!r} ({self.rows_baseline} rows) vs "
            f"{self.other!r} ({self.rows_other} rows)"
        )

    def verdict(self) -> str:
        replayed = (
            f"; {self.replayed} rows of a replayed batch's first attempt left out "
            "(the Kafka sink is at-least-once)"
            if self.replayed
            else ""
        )
        if not self.differs:
            how = "the same distinct rows" if self.duplicates == "allow" else "the same rows"
            return f"{self.title()}: {how} ({self.matched} matched){replayed}"
        text = (
            f"{self.title()}: {self.matched} rows match; {len(self.only_in_baseline)} only in "
            f"{self.baseline!r}, {len(self.only_in_other)} only in {self.other!r}{replayed}"
        )
        excused = len(self.excused)
        if self.explained_by_late_data:
            text += (
                f"; all {excused} explained by {len(self.late)} records the watermark made "
                "late in one run only (missing, or smaller by what they held)"
                + (": allowed (allow_late=True)" if self.allow_late else "")
            )
        elif excused:
            text += f"; {excused} of them explained by late records, the rest not"
        if self.allow_late and excused:
            compared = max(self.rows_baseline, self.rows_other)
            text += f"; {compared - excused} of {compared} rows held to equality, {excused} excused"
        return text

    def lines(self) -> list[str]:
        lines = [self.verdict()]
        for side, rows in (
            (self.baseline, self.only_in_baseline),
            (self.other, self.only_in_other),
        ):
            if not rows:
                continue
            lines.append(f"  only in {side!r}: {len(rows)} rows")
            for diff in rows[:SHOWN_ROWS]:
                lines.append(f"    - {short(diff.row)}")
                if diff.related:
                    more = diff.related_count - len(diff.related)
                    lines.append(
                        f"      inputs with {diff.how_related}: "
                        + "; ".join(diff.related)
                        + (f"; and {more} more" if more > 0 else "")
                    )
                elif diff.how_related:
                    lines.append(f"      no input has {diff.how_related}")
                if diff.excuse:
                    lines.append(f"      excused: {diff.excuse}")
                elif diff.refusal:
                    lines.append(f"      not excused: {diff.refusal}")
            if len(rows) > SHOWN_ROWS:
                lines.append(f"    ... {len(rows) - SHOWN_ROWS} more (all in the JSON report)")
        if self.late:
            lines.append(
                f"  records behind the watermark in one run only: {len(self.late)} "
                "(event time at or below the watermark of the batch that read it)"
            )
            lines += [f"    - {late.line()}" for late in self.late[:SHOWN_LATE]]
        return lines


class RunsReport(Report):
    """A report on runs of the job (an oracle's own, or runs several oracles shared)."""

    runs: list[RunResult]

    @property
    def seconds(self) -> float:
        """Time spent running the job, all runs together: what the oracle adds to a test."""
        return sum(run.seconds for run in self.runs)


@dataclass
class OracleReport(RunsReport):
    """What an oracle ran and found; `ok` when every comparison held."""

    oracle: str
    job: str
    inputs: int
    partitions: int
    runs: list[RunResult] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Why the oracle does not apply to this job ('' when it does): nothing was compared.
    not_applicable: str = ""

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.comparisons)

    def message(self) -> str:
        verdict = "held" if self.ok else "failed: the job's sink differs between runs"
        if self.not_applicable:
            verdict = f"not applicable: {self.not_applicable}"
        lines = [
            f"{self.oracle} {verdict}",
            f"  job {self.job}; {self.inputs} input records in {self.partitions} partitions",
            f"  runs: {runs_text(self.runs)}",
        ]
        for run in self.runs:
            lines += [f"  {run.name!r}: {leg}" for leg in run.legs]
            for restart in run.restarts:
                if _worth_telling(restart):
                    lines += [f"  {run.name!r} {line.strip()}" for line in restart.lines()[1:]]
        lines += [f"  note: {note}" for note in self.notes]
        for comparison in self.comparisons:
            lines += comparison.lines() if comparison.differs else [comparison.verdict()]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The whole report as JSON-ready data (every row, nothing cut)."""
        return {
            "oracle": self.oracle,
            "ok": self.ok,
            "not_applicable": self.not_applicable,
            "job": self.job,
            "inputs": self.inputs,
            "partitions": self.partitions,
            "seconds": round(self.seconds, 2),
            "notes": self.notes,
            "runs": [run.summary() for run in self.runs],
            "comparisons": [
                {
                    "baseline": c.baseline,
                    "other": c.other,
                    "ok": c.ok,
                    "duplicates": c.duplicates,
                    "matched": c.matched,
                    "explained_by_late_data": c.explained_by_late_data,
                    "rows_baseline": c.rows_baseline,
                    "rows_other": c.rows_other,
                    "replayed": c.replayed,
                    "excused": len(c.excused),
                    "only_in_baseline": [jsonable(d.__dict__) for d in c.only_in_baseline],
                    "only_in_other": [jsonable(d.__dict__) for d in c.only_in_other],
                    "late": [jsonable(late.__dict__) for late in c.late],
                }
                for c in self.comparisons
            ],
        }

    def write(self, directory: str | Path, name: str = "oracle-report") -> dict[str, Path]:
        """Write ``<name>.json`` and ``<name>.html`` into `directory`; returns both paths."""
        from kafkatest.assertions.report import write_report_files

        return write_report_files(directory, name, self.to_dict(), render_html(self))


def runs_text(runs: list[RunResult]) -> str:
    """Each run's name, seconds, batches and rows, on one line."""
    return ", ".join(
        f"{r.name!r} {r.seconds:.1f}s ({len(r.batches)} batches, {len(r.rows)} rows)" for r in runs
    )


class OracleAssertionError(AssertionError):
    """An oracle found runs of one job that disagree; `.report` is the `OracleReport`
    (an `InvariantsReport` from `assert_invariants`)."""

    def __init__(self, report: Any) -> None:
        super().__init__(report.message())
        self.report = report


def _worth_telling(restart: RestartExplanation) -> bool:
    """Whether a stopped run's restart did more than go on: it replayed or skipped
    records, or a checkpoint fault was applied before it resumed."""
    return bool(
        restart.replayed_batches
        or restart.skipped
        or restart.damage.removed
        or restart.damage.changed
    )


# -- the HTML page ------------------------------------------------------------
# A self-contained HTML page for an oracle report: runs, differences, inputs behind them.


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
            f"<td>{escape('; '.join(run.legs) or '-')}{_restart_html(run)}</td></tr>"
        )
    head = (
        "<tr><th>run</th><th>settings</th><th>time</th><th>batches</th><th>rows</th>"
        "<th>watermark per batch (ms)</th><th>stops</th></tr>"
    )
    return f"<h2>Runs</h2><table>{head}{''.join(rows)}</table>"


def _restart_html(run: RunResult) -> str:
    told = [r for r in run.restarts if _worth_telling(r)]
    items = "".join(f"<li><code>{escape(line)}</code></li>" for r in told for line in r.lines())
    return f"<ul>{items}</ul>" if items else ""


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
    if diff.excuse:
        how += f"<p>excused: {escape(diff.excuse)}</p>"
    elif diff.refusal:
        how += f"<p>not excused: {escape(diff.refusal)}</p>"
    return f"<li><code>{escape(short(diff.row, 400))}</code>{how}</li>"
