"""Compare two runs' sinks as multisets of rows, and trace each difference to its input.

Order never counts (a correct job may write its rows in any order, and a Kafka
sink's partitions interleave). Floats compare within a tolerance, because a sum
taken in another order (another batch split) may differ in its last bits. A row
found in one run only is traced back to the input records that share its key and
window, and to those the watermark made late in one run but not the other: the
difference between a job's bug and Spark's documented handling of late data.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkatest.oracles.inputs import InputRecord, event_time_ms, to_epoch_ms
from kafkatest.oracles.runs import RunResult

Canon = Any
SHOWN_RELATED = 8


def canonical(value: Any) -> Canon:
    """A hashable form of a row in which equal rows are equal (dict key order ignored)."""
    if hasattr(value, "asDict"):
        value = value.asDict(recursive=True)
    if isinstance(value, Mapping):
        return ("{}", tuple(sorted((str(k), canonical(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return ("[]", tuple(canonical(v) for v in value))
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, dt.datetime):
        return ("ts", to_epoch_ms(value))
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def close(a: Canon, b: Canon, tolerance: float) -> bool:
    """Equal, with numbers equal within `tolerance` (relative, and absolute near zero)."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(close(x, y, tolerance) for x, y in zip(a, b, strict=True))
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance)
    return bool(a == b)


def multiset_difference(
    left: Sequence[dict[str, Any]],
    right: Sequence[dict[str, Any]],
    tolerance: float,
    *,
    duplicates: str = "forbid",
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """Rows only in `left`, only in `right`, and how many matched.

    ``duplicates="allow"`` compares distinct rows: `right` may hold a row of `left`
    more often (an at-least-once sink's replay), but no row `left` lacks.
    """
    if duplicates not in ("forbid", "allow"):
        raise ValueError(f'duplicates must be "forbid" or "allow", not {duplicates!r}')
    left_rows = {canonical(r): r for r in left}
    right_rows = {canonical(r): r for r in right}
    counts_l, counts_r = Counter(canonical(r) for r in left), Counter(canonical(r) for r in right)
    if duplicates == "allow":
        counts_l = Counter(set(counts_l))
        counts_r = Counter(set(counts_r))
    only_l, only_r = counts_l - counts_r, counts_r - counts_l
    # Pair leftovers that differ only within the float tolerance.
    pending_r = list(only_r.elements())
    unmatched_l = []
    for key in only_l.elements():
        twin = next((i for i, other in enumerate(pending_r) if close(key, other, tolerance)), None)
        if twin is None:
            unmatched_l.append(key)
        else:
            pending_r.pop(twin)
    if duplicates == "allow":
        unmatched = set(pending_r)
        matched = sum(1 for r in right if canonical(r) not in unmatched)
    else:
        matched = len(right) - len(pending_r)
    return [left_rows[k] for k in unmatched_l], [right_rows[k] for k in pending_r], matched


def flat(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row's scalar fields by name: a JSON value's fields and nested structs' fields too,
    by full path and by their own name (``value.window.start`` and ``start``), so a sink
    row and an input record can be matched. A top-level field wins a name."""
    found = paths(row)
    out = {path: value for path, value in found.items() if "." not in path}
    for path, value in found.items():
        out.setdefault(path, value)
        out.setdefault(path.rsplit(".", 1)[-1], value)
    return out


def paths(row: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A row's scalar fields by their full dotted path (``value.window.start``)."""
    out: dict[str, Any] = {}
    for name, value in row.items():
        path = f"{prefix}{name}"
        if hasattr(value, "asDict"):
            value = value.asDict(recursive=True)
        if isinstance(value, Mapping):
            out.update(paths(value, f"{path}."))
        elif not isinstance(value, (list, tuple)):
            out[path] = value
    return out


def window_paths(fields: Mapping[str, Any]) -> tuple[str, str] | None:
    """The two fields that hold a row's event-time window: any ``<x>.start``/``<x>.end``
    (``window``, ``session_window``, an alias) or ``<x>_start``/``<x>_end`` pair of times."""
    for path in fields:
        for begin, finish in ((".start", ".end"), ("_start", "_end")):
            if path.endswith(begin):
                other = path[: -len(begin)] + finish
                if other in fields and is_time(fields[path]) and is_time(fields[other]):
                    return path, other
    return None


def is_time(value: Any) -> bool:
    """A timestamp as a sink gives one: a datetime, or ISO-8601 text."""
    if isinstance(value, dt.datetime):
        return True
    return isinstance(value, str) and len(value) >= 10 and to_epoch_ms(value) is not None


def window_of(row: Mapping[str, Any]) -> tuple[int, int] | None:
    """A sink row's event-time window (``window.start/end``, ``window_start/end``, a
    session window) in epoch ms."""
    fields = paths(row)
    found = window_paths(fields)
    if found is None:
        return None
    begin, finish = to_epoch_ms(fields[found[0]]), to_epoch_ms(fields[found[1]])
    return (begin, finish) if begin is not None and finish is not None else None


@dataclass
class Lateness:
    """An input record that the watermark put behind it in one run and not in another."""

    index: int
    describe: str
    event_time_ms: int
    late_in: dict[str, str]  # run name -> "batch 3, watermark 2024-...": only where late

    def line(self) -> str:
        where = "; ".join(f"late in {run} ({text})" for run, text in self.late_in.items())
        return f"{self.describe} event time {_iso(self.event_time_ms)}: {where}"


@dataclass
class RowDifference:
    """A row one run wrote and the other did not, with the input records behind it."""

    row: dict[str, Any]
    only_in: str
    related: list[str] = field(default_factory=list)
    related_count: int = 0
    late: list[Lateness] = field(default_factory=list)
    how_related: str = ""
    #: Input indexes behind the row (all of them; `related` describes the first few).
    indexes: list[int] = field(default_factory=list)
    #: Why records behind the watermark in one run only explain this row ('' if they do
    #: not): which records, and what their absence took from which field.
    excuse: str = ""
    #: Why they do not, when late records share the row's key and window: the row grew
    #: or appeared, or a field changed by more than they hold.
    refusal: str = ""

    @property
    def explained_by_late_data(self) -> bool:
        return bool(self.excuse)


class Tracer:
    """Finds the input records behind a sink row: same key or grouping fields, same window."""

    def __init__(
        self,
        inputs: Sequence[InputRecord],
        event_time: str | None,
        group_by: Sequence[str] | None,
    ) -> None:
        self.inputs = list(inputs)
        self.event_time = event_time
        self.group_by = None if group_by is None else list(group_by)
        self.fields = [self._input_fields(i) for i in self.inputs]
        self.times = [event_time_ms(i, event_time) for i in self.inputs]
        #: Input fields holding numbers, by name: what a sum, minimum or maximum may be of.
        self.numeric_fields = sorted(
            {
                name
                for fields in self.fields
                for name, value in fields.items()
                if "." not in name
                and isinstance(value, (int, float))
                and not isinstance(value, bool)
            }
        )

    @staticmethod
    def _input_fields(item: InputRecord) -> dict[str, Any]:
        row = item.row()
        value = row["value"]
        fields = flat(value) if isinstance(value, Mapping) else {}
        if row["key"] is not None:
            fields.setdefault("key", row["key"])
        return fields

    def shared_fields(self, row: Mapping[str, Any]) -> list[str]:
        """Fields of `row` that group inputs: named by the caller, else every field whose
        value some input has under the same name (floats are measures, not keys)."""
        fields = flat(row)
        if self.group_by is not None:
            return [f for f in self.group_by if f in fields]
        return [
            name
            for name, value in fields.items()
            if not (isinstance(value, float) or value is None or "." in name)
            and any(_same(f.get(name), value) for f in self.fields)
        ]

    def related(self, row: Mapping[str, Any]) -> tuple[list[int], str]:
        """Indexes of the inputs that share `row`'s grouping fields and window."""
        names = self.shared_fields(row)
        fields = flat(row)
        window = window_of(row)
        if not names and window is None:
            return [], ""
        found = [
            index
            for index, (inputs, when) in enumerate(zip(self.fields, self.times, strict=True))
            if all(_same(inputs.get(n), fields[n]) for n in names)
            and (window is None or (when is not None and window[0] <= when < window[1]))
        ]
        how = " and ".join(
            ([f"same {', '.join(names)}"] if names else [])
            + ([f"event time in [{_iso(window[0])}, {_iso(window[1])})"] if window else [])
        )
        return found, how


def late_records(
    tracer: Tracer, runs: Sequence[RunResult], indexes: Sequence[int] | None = None
) -> dict[int, Lateness]:
    """Inputs the watermark put behind it in some of `runs` but not all (by input index).

    A record is behind when its event time is at or below the watermark of the batch
    that read it (Spark drops such records from windowed aggregations in append mode,
    stream-stream joins and deduplication within a watermark).
    """
    wanted = set(range(len(tracer.inputs)) if indexes is None else indexes)
    out: dict[int, Lateness] = {}
    verdicts: dict[int, dict[str, str | None]] = {i: {} for i in wanted}
    for run in runs:
        for (partition, offset), (index, _copy) in sorted(run.placement.items()):
            when = tracer.times[index] if index in wanted else None
            if when is None:
                continue
            batch = run.batch_of(partition, offset)
            late = batch is not None and batch.watermark_ms > 0 and when <= batch.watermark_ms
            text = f"batch {batch.id}, watermark {_iso(batch.watermark_ms)}" if batch else ""
            # Late only if every copy was: a copy dropped behind the watermark while its
            # original counted takes nothing from the run (the redelivery case).
            seen = verdicts[index]
            if run.name not in seen:
                seen[run.name] = text if late else None
            elif not late:
                seen[run.name] = None
    for index, by_run in verdicts.items():
        late_in = {name: text for name, text in by_run.items() if text}
        if late_in and len(late_in) < len(runs):
            when = tracer.times[index]
            assert when is not None
            out[index] = Lateness(index, tracer.inputs[index].describe(), when, late_in)
    return out


def explain(
    tracer: Tracer, rows: Sequence[dict[str, Any]], only_in: str, late: Mapping[int, Lateness]
) -> list[RowDifference]:
    out = []
    for row in rows:
        indexes, how = tracer.related(row)
        out.append(
            RowDifference(
                row=row,
                only_in=only_in,
                related=[tracer.inputs[i].describe() for i in indexes[:SHOWN_RELATED]],
                related_count=len(indexes),
                late=[late[i] for i in indexes if i in late],
                how_related=how,
                indexes=indexes,
            )
        )
    return out


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return False
    if a == b:
        return True
    ta = to_epoch_ms(a) if not isinstance(a, (int, float)) else None
    if ta is not None and not isinstance(b, (int, float)):
        return ta == to_epoch_ms(b)
    return str(a) == str(b)


def _iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat().replace("+00:00", "Z")
