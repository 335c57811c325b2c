"""What a scenario run found (what Spark did, when each fault fired, what reached the
sink), held against its scenario's expectations, every difference written down.

Loss and duplication are compared exactly, by record identity: a scenario that
says "records 5..7 of the first seed are skipped" fails if Spark skipped more,
fewer or others, which `assert_expected_loss` alone (it tolerates records of the
named ranges arriving) would let through.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kafkatest.assertions import (
    DeliveryAssertionError,
    assert_at_least_once,
    assert_exactly_once,
    assert_expected_loss,
    delivery_report,
)
from kafkatest.assertions.report import DeliveryReport
from kafkatest.records import Record
from kafkatest.scenarios.context import RunContext
from kafkatest.scenarios.spec import RecordSet, Scenario
from kafkatest.scenarios.triggers import Firing
from kafkatest.sinks import topic_rows
from kafkatest.spark.errors import (
    DATA_LOSS_CONDITION,
    data_loss_reason,
    data_loss_reasons,
    data_loss_wording,
)

ERROR_SHOWN = 1500


@dataclass
class JobRun:
    """How the job ended: finished, failed (with Spark's error), stopped after `until`, ..."""

    status: str  # finished | failed | stopped | killed | timeout
    error_class: str = ""
    error: str = ""
    #: Spark error conditions on the error and its causes (e.g. KAFKA_DATA_LOSS.<reason>).
    conditions: tuple[str, ...] = ()

    def line(self) -> str:
        if self.status != "failed":
            return {
                "finished": "the job finished",
                "stopped": "the query went on and was stopped once it reached `until`",
                "killed": "the job was killed and not restarted",
                "timeout": "the job did not end in time and was stopped",
            }.get(self.status, self.status)
        text = self.error if len(self.error) <= ERROR_SHOWN else self.error[:ERROR_SHOWN] + " ..."
        named = f" [{', '.join(self.conditions)}]" if self.conditions else ""
        if not any(data_loss_reason(c) for c in self.conditions):
            # Spark 3.5 raises no condition: name the data loss its message words, as 4.x would.
            reasons = data_loss_reasons(self.error, self.conditions)
            if reasons:
                named += (
                    " [data loss in Spark 4's terms: "
                    + ", ".join(f"{DATA_LOSS_CONDITION}.{r}" for r in reasons)
                    + "]"
                )
        return f"the job failed with {self.error_class}{named}: {text}"


@dataclass
class ScenarioResult:
    """Everything a scenario run observed, and which expectations did not hold."""

    scenario: Scenario
    backend: str
    topics: dict[str, str]
    run: JobRun
    firings: list[Firing] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    delivery: DeliveryReport | None = None
    problems: list[str] = field(default_factory=list)
    saved_to: str | None = None
    process_groups: list[int] = field(default_factory=list)
    #: The seeded records the job should deliver, and the sink's rows, for further checks.
    expected: list[Any] = field(default_factory=list)
    sink_rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def text(self) -> str:
        lines = [
            f"scenario {self.scenario.name!r} on {self.backend}: "
            + ("expectations held" if self.ok else "EXPECTATIONS FAILED"),
            "topics: " + ", ".join(f"{k}={v}" for k, v in self.topics.items()),
            "faults:",
        ]
        lines += [f"  - {f.line()}" for f in self.firings] or ["  (none fired)"]
        if self.actions:
            lines.append("actions done: " + "; ".join(self.actions))
        lines.append(f"what Spark did: {self.run.line()}")
        if self.delivery is not None:
            lines.append("what reached the sink:")
            lines += [f"  {line}" for line in self.delivery.message().splitlines()]
        if self.problems:
            lines.append("not as expected:")
            lines += [f"  - {p}" for p in self.problems]
        if self.saved_to:
            lines.append(f"reproduce: kafkatest repro {self.saved_to} --backend {self.backend}")
        return "\n".join(lines)


RUN_FOR_OUTCOME = {"fails": "failed", "continues": "stopped", "finishes": "finished"}


def expected_records(ctx: RunContext, sink: str) -> list[Record]:
    """Every record seeded to a topic other than the sink, in seeding order."""
    return [rec for result in ctx.seeds.values() if result.topic != sink for rec in result.records]


def record_set_ids(ctx: RunContext, sets: list[RecordSet]) -> set[str]:
    """Identities of the seeded records that `sets` name."""
    out: set[str] = set()
    for chosen in sets:
        if chosen.seed not in ctx.seeds:
            raise ValueError(f"no seed labelled {chosen.seed!r}; seeds: {sorted(ctx.seeds)}")
        result = ctx.seeds[chosen.seed]
        for rid, rec in zip(result.ids, result.records, strict=True):
            if chosen.partition is not None and rec.partition != chosen.partition:
                continue
            offset = rec.offset if rec.offset is not None else -1
            if chosen.start is not None and offset < chosen.start:
                continue
            if chosen.end is not None and offset >= chosen.end:
                continue
            out.add(rid)
    return out


def loss_ranges(ctx: RunContext, ids: set[str]) -> dict[tuple[str, int], list[range]]:
    """The origin offsets of the records `ids`, one single-offset range each."""
    out: dict[tuple[str, int], list[range]] = {}
    for result in ctx.seeds.values():
        for rid, rec in zip(result.ids, result.records, strict=True):
            if rid in ids and rec.partition is not None and rec.offset is not None:
                out.setdefault((rec.topic, rec.partition), []).append(
                    range(rec.offset, rec.offset + 1)
                )
    return out


def judge(result: ScenarioResult, ctx: RunContext) -> None:
    """Fill `result.delivery` and `result.problems`."""
    expect = result.scenario.expect
    want = RUN_FOR_OUTCOME[expect.outcome]
    if result.run.status != want:
        result.problems.append(f"expected: the job {expect.outcome}; instead {result.run.line()}")
    if result.run.status == "failed":
        _judge_error(result)
    sink = result.topics[result.scenario.sink]
    expected = expected_records(ctx, sink)
    rows = topic_rows(ctx.broker, sink)
    result.expected, result.sink_rows = expected, rows
    if expect.delivery == "none":
        return
    result.delivery = _delivery(result, ctx, expected, rows)
    if expect.duplicated is not None:
        named = record_set_ids(ctx, expect.duplicated)
        found = {entry.id for entry in result.delivery.duplicated}
        _compare(result, "duplicated", named, found)


def _judge_error(result: ScenarioResult) -> None:
    """Each expected text must be in the error; a ``KAFKA_DATA_LOSS.<reason>`` must be named
    as the running Spark names it (a condition on 4.x, its message on 3.5)."""
    run = result.run
    said = "\n".join([run.error, *run.conditions])
    named = data_loss_reasons(run.error, run.conditions)
    for text in result.scenario.expect.error:
        reason = data_loss_reason(text)
        if reason is None and text not in said:
            result.problems.append(f"the job's error does not say {text!r}")
        elif reason is not None and reason not in named:
            words = " or ".join(repr(n) for n in data_loss_wording(reason).names)
            result.problems.append(f"the job's error does not name {text} (as {words})")


def _delivery(
    result: ScenarioResult, ctx: RunContext, expected: list[Record], rows: list[dict[str, Any]]
) -> DeliveryReport:
    expect = result.scenario.expect
    # The last checkpoint fault, set against the logs now: what the restart replayed.
    explain = ctx.checkpoint_faults[-1].explain() if ctx.checkpoint_faults else None
    try:
        if expect.delivery == "exactly_once":
            return assert_exactly_once(expected, rows, explain=explain)
        if expect.delivery == "at_least_once":
            return assert_at_least_once(expected, rows, explain=explain)
        lost = record_set_ids(ctx, expect.lost)
        report = assert_expected_loss(expected, rows, loss_ranges(ctx, lost), explain=explain)
        _compare(result, "lost", lost, {entry.id for entry in report.expected_loss})
        return report
    except DeliveryAssertionError as exc:
        result.problems.append(f"{expect.delivery.replace('_', '-')} delivery did not hold")
        return exc.report
    except ValueError as exc:
        result.problems.append(str(exc))
        return delivery_report(expected, rows, explain=explain)


def _compare(result: ScenarioResult, what: str, named: set[str], found: set[str]) -> None:
    if named == found:
        return
    extra, absent = sorted(found - named), sorted(named - found)
    parts = []
    if extra:
        parts.append(f"also {what}: {', '.join(extra[:10])}")
    if absent:
        parts.append(f"not {what}: {', '.join(absent[:10])}")
    result.problems.append(f"{what} records differ from the scenario's: " + "; ".join(parts))
