"""A query's stateful operators as its plan and its progress show them.

Spark's progress lists each stateful operator's rows (``stateOperators``, in the
order of the executed plan's state-writing nodes, top-down) without saying which
node it is; the plan's text names each node and its operator id (``opId``), which is
what the state data source and the checkpoint (``state/<opId>``) use. Read together
they say "operator 0, the plan's StreamingDeduplicate". The plan also shows why a
state is never evicted: a deduplication or aggregation key that carries no
watermarked column (Spark marks one ``ts#12-T60000ms``), or a join side with no
state cleanup condition.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: ``+- StreamingDeduplicate [id#15], state info [ ..., opId = 0, ...`` (Restore nodes
#: read the store a Save node writes, and are not listed in the progress).
_NODE = re.compile(r"^[\s+:*|()\d-]*([A-Z]\w+)\s*(\[[^\]]*\])?.*?\bopId = (\d+)")
_ATTRIBUTE = re.compile(r"([A-Za-z_][\w.]*)#\d+(-T\d+ms)?")
_CLEANUP = re.compile(r"state cleanup \[ (.*?) \](?:,|$)")
#: Nodes whose state only the user's function removes (timeouts, TTL, state.remove()).
_USER_STATE = ("FlatMapGroupsWithState", "FlatMapGroupsInPandasWithState", "TransformWithState")
#: Nodes whose rows Spark evicts by the watermark only when a key column carries one.
_KEYED = ("StreamingDeduplicate", "StateStoreSave", "SessionWindowStateStoreSave")


@dataclass(frozen=True)
class PlannedOperator:
    """One state-writing node of the physical plan, top-down."""

    node: str
    op_id: int
    keys: tuple[str, ...] = ()
    #: Key columns that carry the watermark (Spark can evict by them).
    watermarked_keys: tuple[str, ...] = ()
    #: A stream-stream join's ``state cleanup [...]`` text.
    cleanup: str = ""

    def eviction(self) -> str:
        """What the plan says about evicting this operator's state ('' when it says
        nothing either way)."""
        if self.node == "StreamingSymmetricHashJoin":
            sides = [s for s in ("left", "right") if f"{s} = null" in self.cleanup]
            if len(sides) == 2:
                return (
                    "neither side of the join has a state cleanup condition (no watermark "
                    "bounds either side's rows): Spark keeps every row of both"
                )
            if sides:
                return (
                    f"the join's {sides[0]} side has no state cleanup condition: Spark keeps "
                    f"every {sides[0]} row"
                )
            return ""
        if self.node.startswith("StreamingDeduplicateWithinWatermark"):
            return ""
        if self.node.startswith(_KEYED) and self.keys and not self.watermarked_keys:
            return (
                f"its key ({', '.join(self.keys)}) carries no watermarked column, so Spark "
                "never evicts it (put the event-time column in the key, or use "
                "dropDuplicatesWithinWatermark / a window on the watermarked column)"
            )
        if self.node.startswith(_USER_STATE):
            return (
                "its state is removed only by the function (state.remove(), a timeout, a "
                "timer or TTL)"
            )
        return ""


def planned_operators(plan_text: str) -> list[PlannedOperator]:
    """The state-writing nodes of a query's physical plan, in progress order."""
    physical = plan_text.split("== Physical Plan ==", 1)[-1]
    out = []
    for line in physical.splitlines():
        found = _NODE.match(line)
        if not found or "Restore" in found.group(1):
            continue
        attributes = _ATTRIBUTE.findall(found.group(2) or "")
        cleanup = _CLEANUP.search(line)
        out.append(
            PlannedOperator(
                node=found.group(1),
                op_id=int(found.group(3)),
                keys=tuple(name for name, _ in attributes),
                watermarked_keys=tuple(name for name, mark in attributes if mark),
                cleanup=cleanup.group(1) if cleanup else "",
            )
        )
    return out


def state_operators(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A progress report's ``stateOperators`` (empty for a stateless query)."""
    found = report.get("stateOperators") or []
    return [entry for entry in found if isinstance(entry, Mapping)]


def rows_total(reports: Sequence[Mapping[str, Any]], position: int) -> list[int]:
    """Operator `position`'s ``numRowsTotal`` after each report (-1 where missing)."""
    out = []
    for report in reports:
        operators = state_operators(report)
        entry = operators[position] if position < len(operators) else {}
        out.append(int(entry.get("numRowsTotal", -1) or 0) if entry else -1)
    return out
