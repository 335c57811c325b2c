"""Per-record latency from a record's produce timestamp to its copy's in the sink.

Real-Time Mode (PySpark 4.1+) promises that a record reaches the sink as it comes, not
at the batch's end: what a test holds it to is how long records took, per record. The
records are matched as the delivery assertions match them (`analysis.analyse`: the
seed identity, or `on=` key columns); a record's latency is its first copy's sink
timestamp minus its own (Kafka's record timestamps: the producer's clock at send,
CreateTime, for both when the topics keep the default). Percentiles are nearest-rank:
p99 of 100 records is the 99th smallest, a value some record really had.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kafkatest.assertions.analysis import analyse
from kafkatest.assertions.rows import ExpectedRow, display_id
from kafkatest.records import Record


@dataclass(frozen=True)
class RecordLatency:
    """One record's trip: where it was produced, where its first copy landed, how long."""

    record: str
    sink: str
    ms: int


@dataclass(frozen=True)
class LatencyReport:
    """Every matched record's latency, slowest first, and the records never seen."""

    latencies: tuple[RecordLatency, ...]
    missing: tuple[str, ...]

    def percentile(self, q: float) -> int:
        """The nearest-rank `q`th percentile in milliseconds (0 < q <= 100)."""
        if not 0 < q <= 100:
            raise ValueError(f"a percentile is over 0 and at most 100, not {q}")
        if not self.latencies:
            raise ValueError("no record reached the sink: there is no latency to report")
        ascending = sorted(item.ms for item in self.latencies)
        return ascending[math.ceil(q / 100 * len(ascending)) - 1]

    @property
    def p50_ms(self) -> int:
        return self.percentile(50)

    @property
    def p99_ms(self) -> int:
        return self.percentile(99)

    @property
    def max_ms(self) -> int:
        return self.percentile(100)

    def summary(self) -> str:
        """One line: how many records, their p50, p99 and max."""
        if not self.latencies:
            return f"no record reached the sink ({len(self.missing)} missing)"
        text = (
            f"{len(self.latencies)} records: p50 {self.p50_ms} ms, p99 {self.p99_ms} ms, "
            f"max {self.max_ms} ms"
        )
        return text + (f"; {len(self.missing)} never reached the sink" if self.missing else "")

    def slowest(self, count: int = 5) -> list[RecordLatency]:
        return list(self.latencies[:count])


class LatencyAssertionError(AssertionError):
    """Records took longer than the bound; `.report` holds every record's latency."""

    def __init__(self, message: str, report: LatencyReport) -> None:
        super().__init__(message)
        self.report = report


def latency_report(
    expected: Any, actual: Any, *, on: str | Sequence[str] | None = None
) -> LatencyReport:
    """Each expected record's latency to its first copy in `actual` (without asserting).

    `expected` is what the delivery assertions take (a `SeedResult`, `Record`s or
    rows with ``timestamp_ms``), `actual` sink rows with ``timestamp_ms``
    (`topic_rows` gives them).
    """
    analysis = analyse(expected, actual, on)
    latencies: list[RecordLatency] = []
    missing: list[str] = []
    seen: set[Any] = set()
    for item in analysis.expected:
        if item.identity in seen:
            continue
        seen.add(item.identity)
        sightings = analysis.sightings.get(item.identity, [])
        if not sightings:
            missing.append(_where(item))
            continue
        produced = _timestamp(item.source, f"the expected record {_where(item)}")
        first = min(sightings, key=lambda s: _timestamp(s.row, f"the sink row at {s.where}"))
        arrived = _timestamp(first.row, f"the sink row at {first.where}")
        latencies.append(RecordLatency(_where(item), first.where, arrived - produced))
    latencies.sort(key=lambda item: item.ms, reverse=True)
    return LatencyReport(tuple(latencies), tuple(missing))


def assert_latency(
    expected: Any,
    actual: Any,
    *,
    p99_ms: float,
    on: str | Sequence[str] | None = None,
) -> LatencyReport:
    """Every expected record reached the sink, and 99% of them within `p99_ms`.

    Returns the `LatencyReport`; raises `LatencyAssertionError` naming the slowest
    records when the 99th percentile is over the bound, or when a record never arrived
    (its latency has no bound: wait for the rows first, `kafkatest.spark.wait_for_rows`).
    """
    report = latency_report(expected, actual, on=on)
    if report.missing:
        raise LatencyAssertionError(
            f"latency: {len(report.missing)} of {len(report.missing) + len(report.latencies)} "
            f"records never reached the sink (first: {', '.join(report.missing[:5])}); wait "
            "for them before asserting their latency (kafkatest.spark.wait_for_rows)",
            report,
        )
    if not report.latencies:
        raise LatencyAssertionError("latency: no record was expected, nothing to measure", report)
    if report.p99_ms > p99_ms:
        slowest = "; ".join(f"{i.record} -> {i.sink}: {i.ms} ms" for i in report.slowest())
        raise LatencyAssertionError(
            f"latency: p99 {report.p99_ms} ms is over the bound of {p99_ms:g} ms "
            f"({report.summary()}); slowest: {slowest}",
            report,
        )
    return report


def _where(item: ExpectedRow) -> str:
    return str(item.origin) if item.origin is not None else display_id(item.identity)


def _timestamp(source: Record | dict[str, Any], what: str) -> int:
    stamp = source.timestamp_ms if isinstance(source, Record) else source.get("timestamp_ms")
    if not isinstance(stamp, int) or isinstance(stamp, bool):
        raise ValueError(
            f"{what} has no timestamp_ms: latency needs Kafka's record timestamps on both "
            "sides (seed the input with kafkatest.seed, read the sink with topic_rows)"
        )
    return stamp
