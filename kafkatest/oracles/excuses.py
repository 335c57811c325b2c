"""Which differences between two runs records behind the watermark can explain.

A record the watermark put behind it in one run only (`late_records`) is dropped
there by a windowed aggregation in append mode, a stream-stream join or a
deduplication within a watermark: Spark's documented behaviour, not the job's bug.
Its absence can only *take* from that run: a row goes missing, or its count, sum,
minimum or maximum moves by exactly what the record held, or a session splits into
smaller ones inside the other run's session. It can never make a row grow or
appear. So an excuse is granted only where the arithmetic holds:

- the differing rows are grouped by their key fields and windows (a window inside
  another's counts as the same group: a session that lost a record may split);
- for some choice of the late records each run lost (subsets of those late in it),
  every measure (a number or a time outside the window) is what those losses give:
  a count lower by how many, a sum lower by their values of some input field, a
  maximum or minimum that came from one of them; a run with no row for the group
  lost all of its records.

A difference no such choice explains is the job's: a copy counted twice, a value
that grew. Each excused row says which records excuse it and how.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkatest.oracles.compare import (
    Lateness,
    RowDifference,
    Tracer,
    is_time,
    paths,
    window_paths,
)
from kafkatest.oracles.inputs import to_epoch_ms

#: At most 2**this choices of lost records are tried per group; beyond it, the choices
#: are all, none or one of them.
EXHAUSTIVE = 12
_COUNT = "count"


@dataclass
class _Shape:
    """A sink row as the excuse sees it: key fields, window, measures."""

    diff: RowDifference
    side: str
    keys: tuple[tuple[str, Any], ...]
    window: tuple[int, int] | None
    measures: dict[str, float]
    times: set[str] = field(default_factory=set)


def judge_late(
    tracer: Tracer,
    late: Mapping[int, Lateness],
    sides: Mapping[str, Sequence[RowDifference]],
    tolerance: float,
) -> None:
    """Set `excuse` (or `refusal`) on each differing row of the two runs in `sides`."""
    names = list(sides)
    lost = {name: {i for i, item in late.items() if name in item.late_in} for name in names}
    shapes = [_shape(tracer, diff, name) for name in names for diff in sides[name]]
    for group in _groups(shapes):
        related = {i for shape in group for i in shape.diff.indexes}
        losses = {name: sorted(lost[name] & related) for name in names}
        if not any(losses.values()):
            continue
        verdict = _explain(tracer, group, names, losses, sorted(related), tolerance)
        for shape in group:
            if verdict.startswith("excused: "):
                shape.diff.excuse = verdict.removeprefix("excused: ")
            else:
                shape.diff.refusal = verdict


def _shape(tracer: Tracer, diff: RowDifference, side: str) -> _Shape:
    fields = paths(diff.row)
    window = window_paths(fields)
    keys, measures, times = [], {}, set()
    shared = set(tracer.shared_fields(diff.row))
    for path, value in fields.items():
        if window is not None and path in window:
            continue
        leaf = path.rsplit(".", 1)[-1]
        if isinstance(value, bool) or value is None:
            keys.append((path, value))
        elif isinstance(value, (int, float)) and (isinstance(value, float) or leaf not in shared):
            measures[path] = float(value)
        elif is_time(value) and leaf not in shared and path not in shared:
            stamp = to_epoch_ms(value)
            assert stamp is not None
            measures[path] = float(stamp)
            times.add(path)
        else:
            keys.append((path, value))
    span = None
    if window is not None:
        begin, end = to_epoch_ms(fields[window[0]]), to_epoch_ms(fields[window[1]])
        span = (begin, end) if begin is not None and end is not None else None
    return _Shape(diff, side, tuple(sorted(keys, key=repr)), span, measures, times)


def _groups(shapes: list[_Shape]) -> list[list[_Shape]]:
    """Rows of both runs that describe the same thing: equal keys, and windows that are
    equal or one inside the other (connected, so a split session joins its whole)."""
    groups: list[list[_Shape]] = []
    for shape in shapes:
        joined = [g for g in groups if any(_same_thing(shape, other) for other in g)]
        merged = [shape] + [s for g in joined for s in g]
        groups = [g for g in groups if not any(g is j for j in joined)] + [merged]
    return groups


def _same_thing(a: _Shape, b: _Shape) -> bool:
    if a.keys != b.keys or (a.window is None) != (b.window is None):
        return False
    if a.window is None or b.window is None:
        return True
    (s1, e1), (s2, e2) = a.window, b.window
    return (s1 >= s2 and e1 <= e2) or (s2 >= s1 and e2 <= e1)


def _explain(
    tracer: Tracer,
    group: list[_Shape],
    names: list[str],
    losses: Mapping[str, list[int]],
    related: list[int],
    tolerance: float,
) -> str:
    first, second = names
    rows = {name: [s for s in group if s.side == name] for name in names}
    measures = sorted({m for shape in group for m in shape.measures})
    if not rows[first] or not rows[second]:
        present = first if rows[first] else second
        absent = second if present == first else first
        if not losses[absent]:
            return (
                f"appeared in {present!r}: only records late in {present!r} share its key "
                "and window, and a record's absence cannot add a row"
            )
    for lost_first, lost_second in _choices(losses[first], losses[second]):
        if (not rows[second] and lost_first) or (not rows[first] and lost_second):
            continue  # a run with no row lost all of the group: the other lost none of it
        failed = [
            m
            for m in measures
            if not _fits(tracer, m, rows, names, (lost_first, lost_second), related, tolerance)
        ]
        if not failed:
            return "excused: " + _because(tracer, rows, names, (lost_first, lost_second))
    grew = _grew(rows, names, losses, measures)
    return grew or (
        "no choice of the late records explains "
        + ", ".join(m.removeprefix("value.") for m in measures)
        + " (a count, sum, minimum or maximum of what they held)"
    )


def _choices(first: list[int], second: list[int]) -> Iterable[tuple[tuple[int, ...], ...]]:
    """Subsets of the records each run lost: every pair for a few, else the telling ones."""

    def subsets(items: list[int]) -> list[tuple[int, ...]]:
        if len(first) + len(second) <= EXHAUSTIVE:
            return [c for n in range(len(items) + 1) for c in itertools.combinations(items, n)]
        return list(dict.fromkeys([(), tuple(items), *((i,) for i in items)]))

    for pair in itertools.product(subsets(first), subsets(second)):
        if pair[0] or pair[1]:
            yield pair


def _fits(
    tracer: Tracer,
    measure: str,
    rows: Mapping[str, list[_Shape]],
    names: list[str],
    lost: tuple[tuple[int, ...], ...],
    related: list[int],
    tolerance: float,
) -> bool:
    """Whether the two runs' values of `measure` differ by what the lost records held,
    for some way the measure could be computed from its inputs."""
    first, second = (
        [s.measures[measure] for s in rows[name] if measure in s.measures] for name in names
    )
    lost_first, lost_second = lost
    is_time_measure = any(measure in s.times for side in rows.values() for s in side)
    kinds: list[str] = [] if is_time_measure else [_COUNT, *tracer.numeric_fields]
    allowed = _slack(first + second, tolerance, len(first) + len(second))
    for kind in kinds:
        # The first run has what the second lost, and lacks what it lost itself.
        held = sum(_held(tracer, kind, lost_second)) - sum(_held(tracer, kind, lost_first))
        if math.isclose(sum(first) - sum(second), held, abs_tol=allowed):
            return True
    extremes = ["@time"] if is_time_measure else ["@time", *tracer.numeric_fields]
    return any(
        _extreme_fits(tracer, kind, first, second, lost, related, allowed) for kind in extremes
    )


def _extreme_fits(
    tracer: Tracer,
    kind: str,
    first: list[float],
    second: list[float],
    lost: tuple[tuple[int, ...], ...],
    related: list[int],
    allowed: float,
) -> bool:
    """A maximum (or minimum) is always one of the values its records hold, and one that
    differs must be a value only the run that has it held: one of the records the other
    run lost."""
    lost_first, lost_second = lost
    held_second, held_first = _held(tracer, kind, lost_second), _held(tracer, kind, lost_first)
    values = _held(tracer, kind, related)
    for pick in (max, min):
        a = pick(first) if first else None
        b = pick(second) if second else None
        if any(v is not None and not _among(v, values, allowed) for v in (a, b)):
            continue
        if a is not None and b is not None and math.isclose(a, b, abs_tol=allowed):
            return True
        # The run with the more extreme value must have it from a record the other lost.
        if a is not None and (b is None or pick(a, b) == a):
            if _among(a, held_second, allowed):
                return True
        elif b is not None and _among(b, held_first, allowed):
            return True
    return False


def _among(value: float, held: Sequence[float], allowed: float) -> bool:
    return any(math.isclose(value, v, abs_tol=allowed) for v in held)


def _held(tracer: Tracer, kind: str, records: Sequence[int]) -> list[float]:
    """What each record contributes to a measure of this kind."""
    if kind == _COUNT:
        return [1.0] * len(records)
    values = (tracer.times[i] if kind == "@time" else tracer.fields[i].get(kind) for i in records)
    return [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _slack(values: Sequence[float], tolerance: float, rows: int) -> float:
    """How far a sum may be from the records' values: the tolerance, and half a unit of
    the last decimal the values show per row (a job that rounds its sums)."""
    decimals = 0
    for value in values:
        if not float(value).is_integer():
            text = repr(float(value))
            decimals = max(decimals, len(text.split(".", 1)[1]) if "e" not in text else 9)
    rounding = 0.5 * 10 ** -min(decimals, 9) * (rows + 1) if decimals else 0.0
    return max(tolerance * max([1.0, *map(abs, values)]), rounding)


def _grew(
    rows: Mapping[str, list[_Shape]],
    names: list[str],
    losses: Mapping[str, list[int]],
    measures: list[str],
) -> str:
    """'grew' when the run whose records were late has a larger count or sum."""
    for name in names:
        other = names[1] if name == names[0] else names[0]
        if not losses[name] or losses[other]:
            continue
        for measure in measures:
            mine = sum(s.measures.get(measure, 0.0) for s in rows[name])
            theirs = sum(s.measures.get(measure, 0.0) for s in rows[other])
            if rows[name] and mine > theirs:
                return (
                    f"grew in {name!r}: {measure.removeprefix('value.')} {mine:g} against "
                    f"{theirs:g}, though only records late in {name!r} (which that run "
                    "dropped) share its key and window"
                )
    return ""


def _because(
    tracer: Tracer,
    rows: Mapping[str, list[_Shape]],
    names: list[str],
    lost: tuple[tuple[int, ...], ...],
) -> str:
    shape = "; ".join(
        f"{name!r} lacks {', '.join(f'#{i}' for i in records)} (behind its watermark)"
        for name, records in zip(names, lost, strict=True)
        if records
    )
    counts = ", ".join(f"{len(rows[n])} row(s) in {n!r}" for n in names)
    return f"{shape}: what they held accounts for the difference ({counts})"
