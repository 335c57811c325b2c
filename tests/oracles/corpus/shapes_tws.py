"""transformWithStateInPandas (PySpark 4.x) with event-time timers: correct, and as it
goes wrong. Each user's distinct clicks are counted in state; a timer one minute of
event time after the user's last click emits the count and clears the state."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from .common import click, clicks, kafka_sink, ship_by_value, to_kafka

IDLE_MS = 60_000

ship_by_value(__name__)


def processor(keep_state: bool) -> Any:
    """The stateful processor; `keep_state=False` forgets the ids between batches."""
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

    class IdleCounts(StatefulProcessor):  # type: ignore[misc]
        def init(self, handle: Any) -> None:
            self.handle = handle
            self.ids = handle.getListState("ids", "id STRING")
            self.last = handle.getValueState("last", "ms LONG")

        def handleInputRows(
            self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any
        ) -> Iterator[pd.DataFrame]:
            seen = {row[0] for row in self.ids.get()} if keep_state and self.ids.exists() else set()
            last = self.last.get()[0] if keep_state and self.last.exists() else 0
            for frame in rows:
                seen |= set(frame["event_id"])
                last = max(last, int(frame["ts"].max().value // 1_000_000))
            self.ids.clear()
            self.ids.put([(i,) for i in sorted(seen)])
            self.last.update((last,))
            for timer in list(self.handle.listTimers()):
                self.handle.deleteTimer(timer)
            self.handle.registerTimer(last + IDLE_MS)
            return iter([])

        def handleExpiredTimer(
            self, key: Any, timerValues: Any, expiredTimerInfo: Any
        ) -> Iterator[pd.DataFrame]:
            count = len(list(self.ids.get())) if self.ids.exists() else 0
            self.ids.clear()
            self.last.clear()
            yield pd.DataFrame({"user": [key[0]], "clicks": [count]})

        def close(self) -> None:
            pass

    return IdleCounts()


def _idle_counts(
    spark: SparkSession, bootstrap: str, src: str, options: Mapping[str, str], keep: bool
) -> Any:
    frame = clicks(spark, bootstrap, src, options).drop("timestamp").withWatermark("ts", "1 minute")
    return frame.groupBy("user").transformWithStateInPandas(
        statefulProcessor=processor(keep),
        outputStructType="user STRING, clicks LONG",
        outputMode="Append",
        timeMode="EventTime",
    )


def idle_counts(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Correct: the ids live in the state across batches until the timer fires."""
    rows = _idle_counts(spark, bootstrap, src, options, keep=True)
    return kafka_sink(to_kafka(rows, "user"), bootstrap, sink, checkpoint, options)


def idle_counts_forgetful(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Bug (per-batch state): each batch starts the user's ids afresh."""
    rows = _idle_counts(spark, bootstrap, src, options, keep=False)
    return kafka_sink(to_kafka(rows, "user"), bootstrap, sink, checkpoint, options)


#: Users one after another in event time (each idle when the next starts), in one
#: partition so the order holds; dan's click at 10:13 moves the watermark past cy's timer.
TURNS = [
    click(1, "ann", "/home", 0, 0),
    click(2, "ann", "/cart", 0, 30),
    click(3, "ann", "/pay", 1, 0),
    click(4, "bob", "/home", 4, 0),
    click(5, "bob", "/home", 4, 10),
    click(6, "cy", "/home", 8, 0),
    click(7, "cy", "/cart", 8, 45),
    click(8, "cy", "/pay", 9, 30),
    click(9, "dan", "/home", 13, 0),
]
TURNS.insert(4, {"key": "ann", "value": dict(TURNS[2]["value"])})  # ann's /pay retried
