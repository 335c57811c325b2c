"""Stateful processors, Spark's own word count and a click sessionizer: correct, and as
they go wrong."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame, SparkSession, functions as F
from pyspark.sql.streaming import StreamingQuery

from .common import (
    CLICK,
    CLICKS,
    click,
    clicks,
    kafka_sink,
    ship_by_value,
    source,
    started,
    to_kafka,
)

COUNT_OUT = "user STRING, clicks LONG"

ship_by_value(__name__)


def _counting(keep_state: bool) -> Any:
    """applyInPandasWithState's function: clicks per user, each event id counted once
    (the ids seen are the state); `keep_state=False` starts from nothing each batch."""

    def count(
        key: tuple[str], frames: Iterator[pd.DataFrame], state: Any
    ) -> Iterator[pd.DataFrame]:
        seen: set[str] = set()
        if keep_state and state.exists:
            seen = set(state.get[0].split(",")) - {""}
        for frame in frames:
            seen |= set(frame["event_id"])
        state.update((",".join(sorted(seen)),))
        yield pd.DataFrame({"user": [key[0]], "clicks": [len(seen)]})

    return count


def _counts(frame: DataFrame, keep_state: bool) -> DataFrame:
    return frame.groupBy("user").applyInPandasWithState(
        _counting(keep_state), COUNT_OUT, "ids STRING", "Update", "NoTimeout"
    )


def clicks_per_user(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """applyInPandasWithState: a running count of each user's distinct clicks (update
    mode, a Kafka topic keyed by user: the table of counts)."""
    rows = _counts(clicks(spark, bootstrap, src, options).drop("timestamp"), keep_state=True)
    return kafka_sink(to_kafka(rows, "user"), bootstrap, sink, checkpoint, options, mode="update")


def clicks_per_user_forgetful(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Bug (per-batch state): the function ignores the state it is given."""
    rows = _counts(clicks(spark, bootstrap, src, options).drop("timestamp"), keep_state=False)
    return kafka_sink(to_kafka(rows, "user"), bootstrap, sink, checkpoint, options, mode="update")


def word_count(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Apache Spark's structured_kafka_wordcount.py (complete mode), writing each word's
    count to a topic keyed by the word."""
    lines = source(spark, bootstrap, src, options).selectExpr("CAST(value AS STRING) AS line")
    counts = lines.select(F.explode(F.split("line", " ")).alias("word")).groupBy("word").count()
    return kafka_sink(
        to_kafka(counts, "word"), bootstrap, sink, checkpoint, options, mode="complete"
    )


def word_count_to_memory(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """The same word count into a memory table named `sink`."""
    lines = source(spark, bootstrap, src, options).selectExpr("CAST(value AS STRING) AS line")
    counts = lines.select(F.explode(F.split("line", " ")).alias("word")).groupBy("word").count()
    writer = counts.writeStream.format("memory").queryName(sink).outputMode("complete")
    return started(writer, checkpoint, options)


def word_count_per_batch(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Bug (per-batch state): each batch's words counted in foreachBatch and written as
    the words' counts."""

    def write(batch: DataFrame, _batch_id: int) -> None:
        counts = batch.select(F.explode(F.split("line", " ")).alias("word")).groupBy("word").count()
        to_kafka(counts, "word").write.format("kafka").option(
            "kafka.bootstrap.servers", bootstrap
        ).option("topic", sink).save()

    lines = source(spark, bootstrap, src, options).selectExpr("CAST(value AS STRING) AS line")
    return started(lines.writeStream.foreachBatch(write), checkpoint, options)


#: The lines of Spark's example, as a producer of text sends them (no keys).
LINES = [
    {"value": "apache spark"},
    {"value": "apache kafka and apache spark"},
    {"value": "spark streaming"},
    {"value": "kafka streams"},
    {"value": "structured streaming with kafka"},
    {"value": "apache spark structured streaming"},
]


def _arrived(record: dict[str, Any], index: int) -> dict[str, Any]:
    """`record` as a phone uploads it: produced a few minutes after the click (the Kafka
    timestamp), in the last hour so no retention takes it."""
    value = record["value"]
    minute, second = int(value["ts"][14:16]), int(value["ts"][17:19])
    delay_s = 60 * (index % 3) + 20 * (index % 2)
    return {**record, "timestamp_ms": HOUR_AGO + 1000 * (60 * minute + second + delay_s)}


HOUR_AGO = (time.time_ns() // 1_000_000 // 3_600_000 - 1) * 3_600_000
#: The clicks, then dan's half an hour later (the watermark passes every earlier
#: session), each produced some time after it happened.
SESSION_CLICKS = [_arrived(r, i) for i, r in enumerate([*CLICKS, click(12, "dan", "/home", 30, 0)])]


def _sessions(frame: DataFrame, time_column: str) -> DataFrame:
    return frame.groupBy(F.session_window(time_column, "5 minutes"), "user").agg(
        F.count("*").alias("pages"), F.round(F.sum("amount"), 2).alias("spent")
    )


def sessions(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """A click sessionizer: a 10-minute watermark, retries dropped within it, 5-minute
    session windows per user, each closed session to a topic keyed by the user."""
    deduped = (
        clicks(spark, bootstrap, src, options)
        .withWatermark("ts", "10 minutes")
        .dropDuplicatesWithinWatermark(["event_id"])
    )
    return kafka_sink(
        to_kafka(_sessions(deduped, "ts"), "user"), bootstrap, sink, checkpoint, options
    )


def _drop_repeats(frames: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    for frame in frames:
        yield frame.drop_duplicates(subset=["event_id"])


def sessions_dedup_per_batch(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Bug (per-batch state): the retries dropped in mapInPandas, one batch at a time, so
    a retry in a later batch than its first copy counts twice."""
    parsed = clicks(spark, bootstrap, src, options).drop("timestamp")
    deduped = parsed.mapInPandas(_drop_repeats, CLICK).withWatermark("ts", "10 minutes")
    return kafka_sink(
        to_kafka(_sessions(deduped, "ts"), "user"), bootstrap, sink, checkpoint, options
    )


def sessions_on_arrival_time(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Bug (processing time instead of event time): sessions over the Kafka record's
    timestamp (when it was produced), not the click's own time."""
    deduped = (
        clicks(spark, bootstrap, src, options)
        .withWatermark("timestamp", "10 minutes")
        .dropDuplicatesWithinWatermark(["event_id"])
    )
    rows = _sessions(deduped, "timestamp")
    return kafka_sink(to_kafka(rows, "user"), bootstrap, sink, checkpoint, options)
