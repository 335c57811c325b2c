"""Per-partition summary: what became of each seeded offset, as ranges and runs."""

from __future__ import annotations

from kafkatest.assertions.analysis import Analysis
from kafkatest.assertions.ranges import Span, runs
from kafkatest.assertions.report import DeliveryReport, PartitionSummary


def partition_summaries(analysis: Analysis, report: DeliveryReport) -> list[PartitionSummary]:
    """One summary per seeded partition; empty when the expected rows have no origins."""
    allowed = {e.origin for e in report.expected_loss if e.origin is not None}
    status_by_partition: dict[tuple[str, int], dict[int, str]] = {}
    for item in analysis.expected:
        if item.origin is None:
            continue
        seen = len(analysis.sightings[item.identity])
        if seen == 0:
            status = "expected_loss" if item.origin in allowed else "lost"
        elif seen > analysis.expected_count[item.identity]:
            status = "duplicated"
        else:
            status = "delivered"
        for origin in item.copies or (item.origin,):
            place = (origin.topic, origin.partition)
            status_by_partition.setdefault(place, {})[origin.offset] = status
    logs = (
        _log_ranges(analysis, {topic for topic, _ in status_by_partition}) if report.missing else {}
    )
    return [
        _summary(topic, partition, statuses, logs.get((topic, partition)))
        for (topic, partition), statuses in sorted(status_by_partition.items())
    ]


def _log_ranges(analysis: Analysis, topics: set[str]) -> dict[tuple[str, int], tuple[int, int]]:
    """(log start, log end) of each seeded partition, asked of the broker the seed used.

    Only a failing report asks, and a broker that is gone (closed, stopped by a fault)
    just leaves the ranges out: the report must never fail for want of them.
    """
    broker = analysis.log_ranges
    found: dict[tuple[str, int], tuple[int, int]] = {}
    if broker is None:
        return found
    for topic in sorted(topics):
        try:
            starts, ends = broker.earliest_offsets(topic), broker.latest_offsets(topic)
        except Exception:
            continue
        for partition, start in starts.items():
            if partition in ends:
                found[(topic, partition)] = (start, ends[partition])
    return found


def _summary(
    topic: str, partition: int, statuses: dict[int, str], log: tuple[int, int] | None
) -> PartitionSummary:
    universe = sorted(statuses)
    log_start, log_end = log if log is not None else (None, None)

    def spans(*wanted: str) -> tuple[Span, ...]:
        return tuple(runs((o for o in universe if statuses[o] in wanted), universe))

    return PartitionSummary(
        topic=topic,
        partition=partition,
        seeded=len(universe),
        offsets=spans("delivered", "duplicated", "lost", "expected_loss"),
        delivered=spans("delivered", "duplicated"),
        duplicated=spans("duplicated"),
        lost=spans("lost"),
        expected_loss=spans("expected_loss"),
        segments=_segments(universe, statuses),
        log_start=log_start,
        log_end=log_end,
        lost_below_log_start=sum(
            1
            for offset in universe
            if statuses[offset] == "lost" and log_start is not None and offset < log_start
        ),
    )


def _segments(
    universe: list[int], statuses: dict[int, str]
) -> tuple[tuple[str, int, int, int], ...]:
    out: list[tuple[str, int, int, int]] = []
    for offset in universe:
        status = statuses[offset]
        if out and out[-1][0] == status:
            name, first, _last, count = out[-1]
            out[-1] = (name, first, offset, count + 1)
        else:
            out.append((status, offset, offset, 1))
    return tuple(out)
