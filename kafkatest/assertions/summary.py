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
        place = (item.origin.topic, item.origin.partition)
        status_by_partition.setdefault(place, {})[item.origin.offset] = status
    return [
        _summary(topic, partition, statuses)
        for (topic, partition), statuses in sorted(status_by_partition.items())
    ]


def _summary(topic: str, partition: int, statuses: dict[int, str]) -> PartitionSummary:
    universe = sorted(statuses)

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
