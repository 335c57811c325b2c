"""The catch matrix: each job shape, its correct job and its bugs, and which oracles
catch each bug. tests/oracles/test_catch_matrix.py holds the oracles to it on every run;
`python -m tests.oracles.corpus.matrix` prints the table docs/how-to/oracles.md shows
(tests/oracles/test_oracle_docs.py checks the two agree)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import (
    shapes_joins_sinks as joins,
    shapes_simple as simple,
    shapes_stateful as stateful,
    shapes_tws as tws,
)
from .common import CLICKS
from .streams import Stream, event_ids, moved, order_ids, same, sequence

#: The output oracles (`assert_invariants`), then the bounded-state one.
ORACLES = ("split", "restart", "redelivery")
STATE = "state"
#: What `assert_state_bounded` says of a job: its state levels off, grows with the
#: stream, or there is none (a stateless query).
STATE_VERDICTS = ("passes", "grows", "no state")
#: transformWithState keeps its state in RocksDB only.
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
Job = Callable[..., Any]


@dataclass(frozen=True)
class Bug:
    """A bug that reaches production, and the oracles that catch it."""

    kind: str
    job: Job
    #: The oracles that catch it: of ORACLES, and STATE when its state grows.
    caught_by: tuple[str, ...]
    #: Oracle options this job needs beyond its shape's (another sink).
    options: Mapping[str, Any] = field(default_factory=dict)
    why: str = ""
    #: The bug's query keeps no state (a foreachBatch where its shape has an operator).
    stateless: bool = False

    @property
    def state(self) -> str:
        """What the bounded-state oracle must say of it."""
        return "grows" if STATE in self.caught_by else "no state" if self.stateless else "passes"


@dataclass(frozen=True)
class Shape:
    """A job shape: its correct job, its input, and its bugs."""

    name: str
    job: Job
    records: Sequence[Any]
    bugs: tuple[Bug, ...]
    #: Batch i of the bounded-state oracle's stream (corpus/streams.py).
    stream: Stream
    #: What the bounded-state oracle says of the correct job (one of STATE_VERDICTS).
    state: str = "passes"
    options: Mapping[str, Any] = field(default_factory=dict)
    #: Session settings the job needs (restored after it).
    spark_conf: Mapping[str, str] = field(default_factory=dict)
    #: Also run on real Kafka (a third of the corpus).
    on_kafka: bool = False
    #: Why it cannot run on this PySpark line ('' when it can).
    unavailable: Callable[[], str] = lambda: ""


def _no_tws() -> str:
    from pyspark.sql.streaming import stateful_processor

    if not hasattr(stateful_processor.StatefulProcessor, "handleExpiredTimer"):
        return "transformWithStateInPandas with timers needs PySpark 4.1+"
    return ""


CLICK_STREAM = moved(CLICKS, event_ids)

SHAPES: tuple[Shape, ...] = (
    Shape(
        "stateless map/filter",
        simple.enrich,
        CLICKS,
        (
            Bug(
                "non-deterministic key",
                simple.enrich_random_key,
                ("split", "restart"),
                stateless=True,
            ),
        ),
        CLICK_STREAM,
        state="no state",
        on_kafka=True,
    ),
    Shape(
        "tumbling windows, append with watermark",
        simple.tumbling_totals,
        CLICKS,
        (
            Bug(
                "per-batch state",
                simple.tumbling_totals_per_batch,
                ("split", "redelivery"),
                stateless=True,
            ),
        ),
        CLICK_STREAM,
        options={"allow_late": True},
        on_kafka=True,
    ),
    Shape(
        "sliding windows",
        simple.sliding_views,
        CLICKS,
        (
            Bug(
                "non-deterministic key",
                simple.sliding_views_random_ids,
                ("split", "restart", "redelivery"),
            ),
        ),
        CLICK_STREAM,
        options={"allow_late": True},
    ),
    Shape(
        "session windows (a click sessionizer)",
        stateful.sessions,
        stateful.SESSION_CLICKS,
        (
            Bug("per-batch state", stateful.sessions_dedup_per_batch, ("split", "redelivery")),
            Bug("processing time instead of event time", stateful.sessions_on_arrival_time, ()),
        ),
        moved(stateful.SESSION_CLICKS, event_ids, arrival_base_ms=stateful.HOUR_AGO),
        options={"allow_late": True},
        on_kafka=True,
    ),
    Shape(
        "dropDuplicates",
        simple.unique_clicks,
        CLICKS,
        (
            Bug(
                "per-batch state",
                simple.unique_clicks_per_batch,
                ("split", "redelivery"),
                stateless=True,
            ),
        ),
        CLICK_STREAM,
        state="grows",
    ),
    Shape(
        "dropDuplicatesWithinWatermark",
        simple.unique_readings,
        simple.READINGS,
        (
            Bug("a dedup key missing a field", simple.unique_readings_by_device, ("split",)),
            Bug(
                "a watermark the dedup cannot use",
                simple.unique_readings_unbounded,
                (STATE,),
                why="its output is the same; every reading's id stays in its state",
            ),
        ),
        moved(simple.READINGS, sequence),
        options={"allow_late": True},
    ),
    Shape(
        "update mode (applyInPandasWithState)",
        stateful.clicks_per_user,
        CLICKS,
        (Bug("per-batch state", stateful.clicks_per_user_forgetful, ("split",)),),
        CLICK_STREAM,
        on_kafka=True,
    ),
    Shape(
        "complete mode (Spark's word count)",
        stateful.word_count,
        stateful.LINES,
        (
            Bug(
                "per-batch state",
                stateful.word_count_per_batch,
                ("split", "redelivery"),
                stateless=True,
            ),
        ),
        same(stateful.LINES),
        on_kafka=True,
    ),
    Shape(
        "complete mode into a memory sink",
        stateful.word_count_to_memory,
        stateful.LINES,
        (),
        same(stateful.LINES),
        options={"sink": "memory"},
    ),
    Shape(
        "stream-static join",
        joins.tiered_clicks,
        CLICKS,
        (
            Bug(
                "append without batch id",
                joins.tiered_clicks_appended,
                ("restart", "redelivery"),
                options={"sink": "path"},
                stateless=True,
            ),
        ),
        CLICK_STREAM,
        state="no state",
    ),
    Shape(
        "stream-stream join",
        joins.paid_orders,
        joins.ORDER_EVENTS,
        (Bug("a join without watermark on one side", joins.paid_orders_unbounded, (STATE,)),),
        moved(joins.ORDER_EVENTS, order_ids),
        options={"allow_late": True},
    ),
    Shape(
        "foreachBatch upsert",
        joins.upsert_new_clicks,
        CLICKS,
        (
            Bug(
                "append without batch id",
                joins.upsert_appending,
                ("split", "restart", "redelivery"),
                why="its dedup within a batch also lets a retry in a later batch through",
                stateless=True,
            ),
        ),
        CLICK_STREAM,
        state="no state",
        options={"sink": "path", "ignore": ("batch_id",)},
    ),
    Shape(
        "transformWithStateInPandas with timers",
        tws.idle_counts,
        tws.TURNS,
        (Bug("per-batch state", tws.idle_counts_forgetful, ("split",)),),
        moved(tws.TURNS, event_ids),
        options={"partitions": 1},
        spark_conf={"spark.sql.streaming.stateStore.providerClass": ROCKSDB},
        unavailable=_no_tws,
    ),
)


@dataclass(frozen=True)
class Case:
    """One job of the corpus: a shape's correct job, or one of its bugs."""

    shape: Shape
    bug: Bug | None

    @property
    def id(self) -> str:
        return f"{self.shape.name} / {self.bug.kind if self.bug else 'correct'}"

    @property
    def job(self) -> Job:
        return self.bug.job if self.bug else self.shape.job

    @property
    def expected(self) -> tuple[str, ...]:
        """The output oracles that must fail this job (none for a correct one)."""
        return tuple(o for o in self.bug.caught_by if o in ORACLES) if self.bug else ()

    @property
    def state(self) -> str:
        """What the bounded-state oracle must say of this job."""
        return self.bug.state if self.bug else self.shape.state

    def options(self) -> dict[str, Any]:
        return {**self.shape.options, **(self.bug.options if self.bug else {})}


def cases(*, kafka_only: bool = False) -> list[Case]:
    out = []
    for shape in SHAPES:
        if kafka_only and not shape.on_kafka:
            continue
        out.append(Case(shape, None))
        out += [Case(shape, bug) for bug in shape.bugs]
    return out


def table() -> str:
    """The catch matrix as the Markdown table docs/how-to/oracles.md shows."""
    lines = [
        "| job shape | bug | split | restart | redelivery | state |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for shape in SHAPES:
        state = {"grows": "**grows**"}.get(shape.state, shape.state)
        lines.append(f"| {shape.name} | (correct job) | passes | passes | passes | {state} |")
        for bug in shape.bugs:
            cells = ["**caught**" if o in bug.caught_by else "not its job" for o in ORACLES]
            cells.append({"grows": "**caught**", "passes": "not its job"}.get(bug.state, bug.state))
            lines.append(f"| {shape.name} | {bug.kind} | {' | '.join(cells)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
