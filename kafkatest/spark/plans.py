"""What a streaming query's plan says about it: its output mode, watermarks and state.

An oracle must read a sink the way the job writes it (every row in append mode, a
table in update and complete mode), and tell late records from bugs (which column
the watermark is on). Spark says both in the query's plan, on every line and over
Spark Connect too: ``explain(extended=True)`` is a Connect command, and the plan of a
finished query stays readable. Reading the text keeps one code path for classic and
Connect sessions; the formats parsed here are checked on each PySpark line the suite
runs (tests/oracles/test_plans.py).
"""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery

#: ``EventTimeWatermark [<uuid>, ]ts#254: timestamp, 2 minutes`` (4.x adds the uuid).
_WATERMARK = re.compile(
    r"EventTimeWatermark\s+(?:[0-9a-f-]{36},\s*)?([^#,\s]+)#\d+(?:[^,]*),\s*([^\n]+)"
)
#: A stateful operator's output mode, an argument of its node in the physical plan:
#: ``StateStoreSave [word#15], state info [...] ..., Complete, 0, 0, 2``.
_MODE = re.compile(r"\b(Complete|Update|Append)\b")
#: Nodes that carry an output mode (aggregations, session windows, stateful processors).
_MODE_NODES = ("StateStoreSave", "WithState")
#: Nodes that keep state between batches.
_STATEFUL_NODES = (*_MODE_NODES, "StreamingDeduplicate", "StreamingSymmetricHashJoin")
#: What lets a query tell a copy of a record from a new one, by the plan's operators.
_TELLS_COPIES = (
    (("Deduplicate",), "it deduplicates"),
    (("WithState",), "it keeps state of its own"),
    (
        (
            "MapInPandas",
            "MapInArrow",
            "FlatMapGroupsInPandas",
            "FlatMapCoGroupsInPandas",
            "FlatMapGroupsInArrow",
            "ForeachBatchSink",
        ),
        "it runs code over rows or batches that kafkatest cannot see into",
    ),
)
#: The grouping attributes of the operator that saves an aggregation's state.
_STATE_KEYS = re.compile(r"StateStoreSave \[([^\]]*)\]")
_ATTRIBUTE = re.compile(r"([A-Za-z_][\w.]*)#\d+")
_INTERVAL_UNITS_MS = {
    "millisecond": 1,
    "second": 1000,
    "minute": 60_000,
    "hour": 3_600_000,
    "day": 86_400_000,
    "week": 604_800_000,
}


@dataclass(frozen=True)
class Watermark:
    """A ``withWatermark`` of the query: the event-time column and the delay."""

    column: str
    delay_ms: int | None


@dataclass(frozen=True)
class QueryPlan:
    """The facts an oracle needs from a query's plan (None: the plan does not say)."""

    text: str
    #: "append", "update" or "complete" for a stateful query; None for a stateless one
    #: (where Spark treats update as append).
    output_mode: str | None
    watermarks: tuple[Watermark, ...]
    #: Columns an aggregation groups by (its state's key), in plan order.
    state_keys: tuple[str, ...]

    @property
    def stateful(self) -> bool:
        return any(node in self.text for node in _STATEFUL_NODES)

    @property
    def tells_copies_apart(self) -> str | None:
        """How the query could keep a copy of a record from counting twice ("it
        deduplicates", ...); None when nothing in its plan could (an aggregation, a join,
        a projection: every copy is input to it). An empty plan could do anything."""
        if not self.text:
            return "its plan is not known"
        return next(
            (how for nodes, how in _TELLS_COPIES if any(node in self.text for node in nodes)),
            None,
        )


def plan_text(query: StreamingQuery) -> str:
    """The query's extended plan as text ('' when Spark has none to show).

    Classic queries answer through py4j; Connect queries through the explain command
    (PySpark prints its answer: it is captured, not shown).
    """
    jsq = getattr(query, "_jsq", None)
    if jsq is not None:
        try:
            return str(jsq.explainInternal(True))
        except Exception:
            return ""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            query.explain(True)
    except Exception:
        return ""
    return out.getvalue()


def read_plan(query: StreamingQuery) -> QueryPlan:
    """Parse what `plan_text` gives for `query`."""
    return parse_plan(plan_text(query))


def parse_plan(text: str) -> QueryPlan:
    physical = text.split("== Physical Plan ==", 1)[-1]
    mode = None
    for line in physical.splitlines():
        if any(node in line for node in _MODE_NODES):
            found = _MODE.findall(line.split("]", 1)[-1] if "StateStoreSave" in line else line)
            if found:
                mode = found[-1].lower()
                break
    watermarks: list[Watermark] = []
    for column, rest in _WATERMARK.findall(text):
        mark = Watermark(column, interval_ms(rest))
        if mark not in watermarks:
            watermarks.append(mark)
    keys: tuple[str, ...] = ()
    grouped = _STATE_KEYS.search(physical)
    if grouped:
        keys = tuple(dict.fromkeys(_ATTRIBUTE.findall(grouped.group(1))))
    return QueryPlan(text, mode, tuple(watermarks), keys)


def interval_ms(text: str) -> int | None:
    """Milliseconds in Spark's rendering of an interval (``2 minutes``, ``10 seconds``,
    ``interval 1 hours 30 minutes``); None when it is not one."""
    total = 0
    found = False
    for amount, unit in re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]+)", text.lower()):
        base = unit.rstrip("s")
        factor = _INTERVAL_UNITS_MS.get(base)
        if factor is None and base == "m":
            factor = 60_000
        if factor is None:
            continue
        total += int(float(amount) * factor)
        found = True
    return total if found else None
