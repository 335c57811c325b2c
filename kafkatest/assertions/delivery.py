"""Assertions for the delivery guarantee a job claims, with a report on failure.

Kafka sinks are at-least-once: a correct job may write duplicates, so equality
fails for the wrong reason and a count hides real loss. Each assertion here
matches records by identity and fails only on what its guarantee forbids, with a
`DeliveryAssertionError` whose message lists the records that broke it.

`expected` is a `SeedResult`, `Record`s, dicts or a DataFrame; `actual` is what
a sink reader returns (dicts, Rows, `Record`s or a DataFrame). `on` names the
key columns that identify a record (default: the seed identity); for expected
dicts, the other columns of each expected row are compared too, minus `ignore`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from kafkatest.assertions.analysis import Analysis, Sighting, analyse
from kafkatest.assertions.order import order_violations
from kafkatest.assertions.report import DeliveryAssertionError, DeliveryReport, Entry
from kafkatest.assertions.rows import ExpectedRow, display_id, display_row
from kafkatest.assertions.summary import partition_summaries
from kafkatest.checkpoints.explain import RestartExplanation

Columns = str | Sequence[str] | None
#: A half-open offset range: a ``range`` or a ``(start, end)`` pair.
OffsetRange = range | tuple[int, int]
LossSpec = (
    Mapping[tuple[str, int], OffsetRange | Sequence[OffsetRange]]
    | Iterable[tuple[str, int, int, int]]
)

#: Each check's guarantee (as its report names it) and the kinds of finding that fail
#: it: the one place the five checks differ. `delivery_report` fails on nothing.
GUARANTEES: Mapping[str, tuple[str, ...]] = {
    "delivery": (),
    "exactly-once": ("missing", "duplicated", "unexpected", "mismatched"),
    "at-least-once": ("missing", "unexpected", "mismatched"),
    "no-loss": ("missing",),
    "expected-loss": ("missing", "unexpected", "mismatched"),
    "per-key-order": ("out_of_order",),
}


def delivery_report(
    expected: Any,
    actual: Any,
    *,
    on: Columns = None,
    ignore: Sequence[str] = (),
    explain: RestartExplanation | None = None,
) -> DeliveryReport:
    """Everything the assertions see, without asserting: for exploring a job's output.

    Every assertion takes `explain`: a checkpoint fault's `RestartExplanation`
    (`kafkatest.checkpoints.record_checkpoint_fault`), whose batches the report then
    names as the cause of each duplicated or lost range.
    """
    return _report("delivery", analyse(expected, actual, on, ignore), explain=explain)


def assert_exactly_once(
    expected: Any,
    actual: Any,
    *,
    on: Columns = None,
    ignore: Sequence[str] = (),
    explain: RestartExplanation | None = None,
) -> DeliveryReport:
    """Every expected record exactly once, nothing else (idempotent or transactional sinks)."""
    return _check(_report("exactly-once", analyse(expected, actual, on, ignore), explain=explain))


def assert_at_least_once(
    expected: Any,
    actual: Any,
    *,
    on: Columns = None,
    ignore: Sequence[str] = (),
    explain: RestartExplanation | None = None,
) -> DeliveryReport:
    """Every expected record at least once; duplicates pass, strangers do not.

    This is what Spark's Kafka sink promises: retried tasks and restarted queries
    may write a record again, but must never drop or invent one.
    """
    return _check(_report("at-least-once", analyse(expected, actual, on, ignore), explain=explain))


def assert_no_loss(
    expected: Any,
    actual: Any,
    *,
    on: Columns = None,
    ignore: Sequence[str] = (),
    explain: RestartExplanation | None = None,
) -> DeliveryReport:
    """Every expected record arrived; duplicates and other records are allowed.

    For sinks shared with other writers, where only loss is a failure.
    """
    return _check(_report("no-loss", analyse(expected, actual, on, ignore), explain=explain))


def assert_expected_loss(
    expected: Any,
    actual: Any,
    expected_loss: LossSpec,
    *,
    on: Columns = None,
    ignore: Sequence[str] = (),
    allow_duplicates: bool = True,
    explain: RestartExplanation | None = None,
) -> DeliveryReport:
    """The only missing records are those seeded in the given offset ranges.

    For ``failOnDataLoss=false`` runs, where records deleted before the job read
    them are skipped on purpose. Ranges are half-open like Kafka's: give
    ``{("topic", 0): range(10, 20)}`` or ``[("topic", 0, 10, 20)]``. Records in
    those ranges may still arrive (the job may have read them first).
    """
    analysis = analyse(expected, actual, on, ignore)
    also = () if allow_duplicates else ("duplicated",)
    return _check(
        _report("expected-loss", analysis, loss_ranges(expected_loss), explain=explain, also=also)
    )


def assert_order_per_key(
    expected: Any,
    actual: Any,
    *,
    key: str | None = None,
    on: Columns = None,
    order_by: str | None = None,
) -> DeliveryReport:
    """Records of each key arrive in the order they were seeded (first copies count).

    `key` is the column grouping the expected records (default: the Kafka key).
    Actual order is the order of `actual`, or of its `order_by` column (e.g.
    ``"offset"``); read sink topics with one partition per key for this to mean
    something. Replayed duplicates after a restart are not violations.
    """
    analysis = analyse(expected, actual, on, ())
    violations = order_violations(analysis, key, order_by)
    return _check(_report("per-key-order", analysis, out_of_order=violations))


def loss_ranges(spec: LossSpec) -> dict[tuple[str, int], list[range]]:
    """Normalise the ways a user names lost offset ranges to ranges per partition."""
    out: dict[tuple[str, int], list[range]] = {}
    if isinstance(spec, Mapping):
        for (topic, partition), ranges in spec.items():
            out[(topic, partition)] = _offset_ranges(ranges)
        return out
    for topic, partition, start, end in spec:
        out.setdefault((topic, partition), []).append(range(start, end))
    return out


def _offset_ranges(ranges: OffsetRange | Sequence[OffsetRange]) -> list[range]:
    """One partition's lost offsets: a range, a ``(start, end)`` pair, or a list of them."""
    if isinstance(ranges, range):
        return [ranges]
    if isinstance(ranges, tuple) and all(isinstance(x, int) for x in ranges):
        return [range(*ranges)]
    # Not a lone (start, end) pair (handled above), so a list of ranges or pairs.
    items = cast("Sequence[OffsetRange]", ranges)
    return [r if isinstance(r, range) else range(*r) for r in items]


def _check(report: DeliveryReport) -> DeliveryReport:
    if not report.ok:
        raise DeliveryAssertionError(report)
    return report


def _report(
    guarantee: str,
    analysis: Analysis,
    allowed_loss: dict[tuple[str, int], list[range]] | None = None,
    out_of_order: list[Entry] | None = None,
    explain: RestartExplanation | None = None,
    also: tuple[str, ...] = (),
) -> DeliveryReport:
    """The report of one check: `guarantee` fails on its `GUARANTEES` row, and `also`."""
    missing: list[Entry] = []
    expected_loss: list[Entry] = []
    for item in analysis.missing_rows():
        entry = _entry(analysis, item)
        (expected_loss if _in_ranges(item, allowed_loss) else missing).append(entry)
    report = DeliveryReport(
        guarantee=guarantee,
        matched_on=" or ".join("+".join(cols) for cols in analysis.matched_on),
        expected=len(analysis.expected),
        seen=analysis.seen,
        distinct=analysis.distinct,
        missing=missing,
        duplicated=[_entry(analysis, item, seen) for item, seen in analysis.duplicated()],
        unexpected=[_unexpected(s) for s in analysis.unexpected],
        mismatched=[
            _entry(analysis, item, [sighting], "; ".join(diffs))
            for item, sighting, diffs in analysis.mismatched()
        ],
        out_of_order=out_of_order or [],
        expected_loss=expected_loss,
    )
    report.partitions = partition_summaries(analysis, report)
    report.failures = tuple(name for name in GUARANTEES[guarantee] + also if getattr(report, name))
    if explain is not None:
        report.explanation = [
            *explain.why(
                {(p.topic, p.partition): p.duplicated for p in report.partitions if p.duplicated},
                {(p.topic, p.partition): p.lost for p in report.partitions if p.lost},
            ),
            *explain.lines(),
        ]
    return report


def _entry(
    analysis: Analysis,
    item: ExpectedRow,
    sightings: list[Sighting] | None = None,
    detail: str = "",
) -> Entry:
    seen = analysis.sightings.get(item.identity, [])
    shown = seen if sightings is None else sightings
    return Entry(
        id=display_id(item.identity),
        origin=item.origin,
        expected=analysis.expected_count[item.identity],
        seen=len(seen),
        row=shown[0].row if detail else display_row(item),
        seen_at=tuple(s.where for s in shown) if sightings is not None else (),
        detail=detail,
        copies=item.copies,
    )


def _unexpected(sighting: Sighting) -> Entry:
    return Entry(
        id=display_id(sighting.identity),
        origin=None,
        expected=0,
        seen=1,
        row=sighting.row,
        seen_at=(sighting.where,),
    )


def _in_ranges(item: ExpectedRow, allowed: dict[tuple[str, int], list[range]] | None) -> bool:
    if not allowed or item.origin is None:
        return False
    ranges = allowed.get((item.origin.topic, item.origin.partition), [])
    return any(item.origin.offset in r for r in ranges)
