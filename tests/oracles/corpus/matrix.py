"""The catch matrix: each job shape, its correct job and its bugs, and which oracles
catch each bug. tests/oracles/test_catch_matrix.py holds the oracles to it on every run;
`python -m tests.oracles.corpus.matrix` prints the table docs/oracles.md shows
(tests/oracles/test_oracle_docs.py checks the two agree)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import shapes_joins_sinks as joins
from . import shapes_simple as simple
from . import shapes_stateful as stateful
from . import shapes_tws as tws
from .common import CLICKS

ORACLES = ("split", "restart", "redelivery")
#: transformWithState keeps its state in RocksDB only.
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
Job = Callable[..., Any]


@dataclass(frozen=True)
class Bug:
    """A bug that reaches production, and the oracles that catch it."""

    kind: str
    job: Job
    caught_by: tuple[str, ...]
    #: Oracle options this job needs beyond its shape's (another sink).
    options: Mapping[str, Any] = field(default_factory=dict)
    why: str = ""


@dataclass(frozen=True)
class Shape:
    """A job shape: its correct job, its input, and its bugs."""

    name: str
    job: Job
    records: Sequence[Any]
    bugs: tuple[Bug, ...]
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


SHAPES: tuple[Shape, ...] = (
    Shape(
        "stateless map/filter",
        simple.enrich,
        CLICKS,
        (Bug("non-deterministic key", simple.enrich_random_key, ("split", "restart")),),
        on_kafka=True,
    ),
    Shape(
        "tumbling windows, append with watermark",
        simple.tumbling_totals,
        CLICKS,
        (Bug("per-batch state", simple.tumbling_totals_per_batch, ("split", "redelivery")),),
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
        options={"allow_late": True},
        on_kafka=True,
    ),
    Shape(
        "dropDuplicates",
        simple.unique_clicks,
        CLICKS,
        (Bug("per-batch state", simple.unique_clicks_per_batch, ("split", "redelivery")),),
    ),
    Shape(
        "dropDuplicatesWithinWatermark",
        simple.unique_readings,
        simple.READINGS,
        (Bug("a dedup key missing a field", simple.unique_readings_by_device, ("split",)),),
        options={"allow_late": True},
    ),
    Shape(
        "update mode (applyInPandasWithState)",
        stateful.clicks_per_user,
        CLICKS,
        (Bug("per-batch state", stateful.clicks_per_user_forgetful, ("split",)),),
        on_kafka=True,
    ),
    Shape(
        "complete mode (Spark's word count)",
        stateful.word_count,
        stateful.LINES,
        (Bug("per-batch state", stateful.word_count_per_batch, ("split", "redelivery")),),
        on_kafka=True,
    ),
    Shape(
        "complete mode into a memory sink",
        stateful.word_count_to_memory,
        stateful.LINES,
        (),
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
            ),
        ),
    ),
    Shape(
        "stream-stream join",
        joins.paid_orders,
        joins.ORDER_EVENTS,
        (Bug("a join without watermark on one side", joins.paid_orders_unbounded, ()),),
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
            ),
        ),
        options={"sink": "path", "ignore": ("batch_id",)},
    ),
    Shape(
        "transformWithStateInPandas with timers",
        tws.idle_counts,
        tws.TURNS,
        (Bug("per-batch state", tws.idle_counts_forgetful, ("split",)),),
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
        """The oracles that must fail this job (none for a correct one)."""
        return self.bug.caught_by if self.bug else ()

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
    """The catch matrix as the Markdown table docs/oracles.md shows."""
    lines = [
        "| job shape | bug | split | restart | redelivery |",
        "| --- | --- | --- | --- | --- |",
    ]
    for shape in SHAPES:
        lines.append(f"| {shape.name} | (correct job) | passes | passes | passes |")
        for bug in shape.bugs:
            cells = ["**caught**" if o in bug.caught_by else "not its job" for o in ORACLES]
            lines.append(f"| {shape.name} | {bug.kind} | {' | '.join(cells)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
