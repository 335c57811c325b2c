"""All three oracles in one call, sharing runs: `assert_invariants`.

Run one by one, the oracles cost about twelve runs of the job (each seeds, starts and
reads its own runs, and the split of one record per trigger alone is a batch per
record). Most of that can be shared without losing a catch:

- one run reading everything in one batch is the reference for all three;
- one run cut into a few batches *and* stopped at the stops is both the split and the
  restart check: if it agrees with the reference, so do both (a restart can only add
  a difference, a split only add one); if it does not, one more run (the same cut,
  uninterrupted) tells which of the two the difference belongs to;
- one run reading every record twice, the copies in a later batch, is the
  redelivery check.

Three runs for a job that holds, four for one that does not, on one seeded input.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from typing_extensions import Unpack

from kafkatest.oracles.batches import TARGET_BATCHES, limit_for, needed_batches
from kafkatest.oracles.engine import Oracle
from kafkatest.oracles.invariants import (
    redeliver_through_lost_acks,
    redelivery_applies,
    replay_policy,
)
from kafkatest.oracles.options import OracleKeywords, OracleOptions, check_copies, check_duplicates
from kafkatest.oracles.report import OracleAssertionError, OracleReport, RunsReport, runs_text
from kafkatest.oracles.runs import Job, RunResult
from kafkatest.oracles.stops import StopPoint, check_order


@dataclass
class InvariantsReport(RunsReport):
    """The three oracles' verdicts from shared runs; `ok` when all three held."""

    split: OracleReport
    restart: OracleReport
    redelivery: OracleReport
    runs: list[RunResult] = field(default_factory=list)

    @property
    def reports(self) -> list[OracleReport]:
        return [self.split, self.restart, self.redelivery]

    @property
    def ok(self) -> bool:
        return all(report.ok for report in self.reports)

    def message(self) -> str:
        verdict = "held" if self.ok else "failed"
        head = [
            f"invariants {verdict}: split {_word(self.split)}, restart {_word(self.restart)}, "
            f"redelivery {_word(self.redelivery)} ({len(self.runs)} shared runs: "
            f"{runs_text(self.runs)})"
        ]
        return "\n".join(head + [report.message() for report in self.reports])

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "seconds": round(self.seconds, 2),
            "split": self.split.to_dict(),
            "restart": self.restart.to_dict(),
            "redelivery": self.redelivery.to_dict(),
        }

    def write(self, directory: str | Path, name: str = "oracle-report") -> dict[str, Path]:
        """Write one JSON and HTML report per oracle into `directory`."""
        out: dict[str, Path] = {}
        for which, report in zip(("split", "restart", "redelivery"), self.reports, strict=True):
            for kind, path in report.write(directory, f"{name}-{which}").items():
                out[f"{which} {kind}"] = path
        return out


def assert_invariants(
    job: Job,
    records: Iterable[Any] | str,
    *,
    stops: Sequence[str] = ("crash_before_commit:1",),
    copies: int = 2,
    lost_acks: bool = False,
    max_offsets_per_trigger: int | None = None,
    duplicates: str | None = None,
    expect_dedup: bool | None = None,
    **options: Unpack[OracleKeywords],
) -> InvariantsReport:
    """The split, restart and redelivery oracles on shared runs (see the module's doc).

    `stops` are made in order in one run (by default one crash after batch 1's sink
    write: the resumed query restores batch 0's state and replays batch 1, what a clean
    stop checks and more); `max_offsets_per_trigger` cuts that run
    (default: about three batches, and enough for the stops); `copies` as for
    `assert_redelivery_invariant`, and `lost_acks=True` adds its lost-ack run on the
    emulator; `expect_dedup` says whether redelivery applies (see there); `duplicates`
    as for `assert_restart_invariant`. Returns the `InvariantsReport`; raises
    `OracleAssertionError` when any of the three fails.
    """
    settings = OracleOptions.of("assert_invariants", options)
    points = [StopPoint.parse(text) for text in stops]
    check_order(points)
    check_duplicates(duplicates)
    check_copies(copies)
    with Oracle("invariants", job, records, settings) as oracle:
        limit = _cut(oracle, points, max_offsets_per_trigger)
        baseline, combined, copied = _shared_runs(oracle, points, limit, copies)
        stopped = bool(combined.restarts)
        policy = duplicates or replay_policy(oracle)
        reports = _judge(oracle, baseline, combined, copied, policy, limit, stopped)
        if points and not stopped:
            reports.restart.not_applicable = (
                f"a memory sink cannot resume from its checkpoint in {oracle.output_mode} "
                "mode (Spark refuses); give a topic or path sink to check restarts"
            )
        reports.redelivery.not_applicable = redelivery_applies(baseline, expect_dedup)
        if reports.redelivery.not_applicable:
            reports.redelivery.comparisons = []
        else:
            reports.redelivery.comparisons.append(oracle.compare(baseline, copied, "forbid"))
            _lost_acks(oracle, reports.redelivery, baseline, lost_acks)
        shared = [n for n in oracle.report.notes if "lost-ack" not in n]
        for report in reports.reports:
            report.notes[:0] = shared
        reports.runs = list(oracle.report.runs)
        if not reports.ok:
            raise OracleAssertionError(reports)
        return reports


def _lost_acks(oracle: Oracle, report: OracleReport, baseline: RunResult, wanted: bool) -> None:
    """The lost-ack run of the redelivery oracle, into its report."""
    before = len(oracle.report.comparisons)
    redeliver_through_lost_acks(oracle, baseline, max(1, len(oracle.inputs)), wanted)
    report.comparisons += oracle.report.comparisons[before:]
    report.runs += [r for r in oracle.report.runs if r.name == "lost acks"]
    report.notes += [n for n in oracle.report.notes if "lost-ack" in n]


def _shared_runs(
    oracle: Oracle, points: list[StopPoint], limit: int, copies: int
) -> tuple[RunResult, RunResult, RunResult]:
    """The reference, the cut-and-stopped run and the copies run, at the same time.

    A micro-batch of a test's few records spends most of its time waiting (planning,
    scheduling, the broker), not computing: three queries side by side on the shared
    session take little longer than the slowest of them. The memory sink in append
    or update mode cannot resume after a stop, so where the output mode is not given
    the reference runs first to tell it.
    """
    cut = f"maxOffsetsPerTrigger={limit}"
    stopped = f"{cut}, stopped at {', '.join(map(str, points))}" if points else cut
    copied = f"copies={copies}"
    placements = {
        "one batch": oracle.source("one batch"),
        stopped: oracle.source(stopped),
        copied: oracle.source(copied, copies),
    }
    every = max(1, len(oracle.inputs))
    memory_unknown = oracle.options.sink == "memory" and oracle.output_mode is None
    with ThreadPoolExecutor(3, thread_name_prefix="kafkatest-oracle") as pool:
        first = None
        if memory_unknown:
            first = oracle.run("one batch", placements["one batch"], None)
        restartable = not (oracle.options.sink == "memory" and oracle.output_mode != "complete")
        if points and not restartable:
            placements[cut] = placements.pop(stopped)
            stopped = cut
        pending = [
            pool.submit(
                oracle.run, stopped, placements[stopped], limit, points if restartable else ()
            ),
            pool.submit(oracle.run, copied, placements[copied], every),
        ]
        if first is None:
            pending.insert(0, pool.submit(oracle.run, "one batch", placements["one batch"], None))
        done = [future.result() for future in pending]
    if first is not None:
        done.insert(0, first)
    oracle.report.runs.sort(key=lambda run: [r.name for r in done].index(run.name))
    return done[0], done[1], done[2]


def _cut(oracle: Oracle, points: list[StopPoint], given: int | None) -> int:
    """The combined run's limit: the given one (if it reaches the stops), else one that
    gives about `TARGET_BATCHES` batches and at least what the stops need."""
    need = needed_batches([(p.kind, p.batch) for p in points])
    if given is None:
        preferred = limit_for(oracle.sizes(), max(need, TARGET_BATCHES))
        if preferred is not None:
            return preferred
    last = str(max(points, key=lambda p: p.batch)) if points else "the split"
    return oracle.limit_reaching(max(need, 2), given, f"stop {last}")


def _judge(
    oracle: Oracle,
    baseline: RunResult,
    combined: RunResult,
    copied: RunResult,
    policy: str,
    limit: int,
    stopped: bool,
) -> InvariantsReport:
    reports = {
        name: OracleReport(name, oracle.report.job, len(oracle.inputs), oracle.partitions)
        for name in ("split invariance", "restart invariance", "redelivery invariance")
    }
    split, restart, redelivery = reports.values()
    first = oracle.compare(baseline, combined, policy if stopped else "forbid")
    if first.ok or not stopped:
        split.runs, split.comparisons = [baseline, combined], [first]
        restart.runs = [baseline, combined]
        restart.comparisons = [first] if stopped else []
        if stopped:
            restart.notes.append(
                "the stopped run was also the split run: agreeing with the one-batch run, "
                "it holds both"
            )
    else:
        # Which oracle's difference is it? The same cut, uninterrupted, tells.
        uninterrupted = oracle.run(f"maxOffsetsPerTrigger={limit}", oracle.source("cut"), limit)
        split.runs = [baseline, uninterrupted]
        split.comparisons = [oracle.compare(baseline, uninterrupted, "forbid")]
        restart.runs = [uninterrupted, combined]
        restart.comparisons = [oracle.compare(uninterrupted, combined, policy)]
    redelivery.runs = [baseline, copied]
    return InvariantsReport(split, restart, redelivery)


def _word(report: OracleReport) -> str:
    if report.ok and not report.comparisons:
        return "not run"
    return "held" if report.ok else "FAILED"
