"""Stateless, windowed and deduplicating jobs: correct, and as they go wrong."""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession, functions as F
from pyspark.sql.streaming import StreamingQuery

from .common import clicks, kafka_sink, ship_by_value, source, started, to_kafka

ship_by_value(__name__)


def enrich(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Stateless: paid clicks with their page upper-cased, keyed by event id."""
    paid = clicks(spark, bootstrap, src, options).where(F.col("amount") > 0)
    rows = paid.select("event_id", "user", F.upper("page").alias("page"), "amount")
    return kafka_sink(to_kafka(rows, "event_id"), bootstrap, sink, checkpoint, options)


def enrich_random_key(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Bug (a non-deterministic key): each row keyed by a fresh uuid()."""
    paid = clicks(spark, bootstrap, src, options).where(F.col("amount") > 0)
    rows = paid.select("event_id", "user", F.upper("page").alias("page"), "amount")
    return kafka_sink(to_kafka(rows, F.expr("uuid()")), bootstrap, sink, checkpoint, options)


def _tumbling(frame: DataFrame) -> DataFrame:
    return frame.groupBy(F.window("ts", "5 minutes"), "user").agg(
        F.count("*").alias("clicks"), F.round(F.sum("amount"), 2).alias("total")
    )


def tumbling_totals(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Append with a watermark: 5-minute totals per user, retries removed."""
    deduped = (
        clicks(spark, bootstrap, src, options)
        .withWatermark("ts", "2 minutes")
        .dropDuplicatesWithinWatermark(["event_id"])
    )
    return kafka_sink(to_kafka(_tumbling(deduped), "user"), bootstrap, sink, checkpoint, options)


def tumbling_totals_per_batch(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Bug (per-batch state): the totals computed inside foreachBatch, batch by batch."""

    def write(batch: DataFrame, _batch_id: int) -> None:
        totals = _tumbling(batch.dropDuplicates(["event_id"]))
        to_kafka(totals, "user").write.format("kafka").option(
            "kafka.bootstrap.servers", bootstrap
        ).option("topic", sink).save()

    frame = clicks(spark, bootstrap, src, options)
    return started(frame.writeStream.foreachBatch(write), checkpoint, options)


def _sliding(frame: DataFrame) -> DataFrame:
    return frame.groupBy(F.window("ts", "4 minutes", "2 minutes"), "page").agg(
        F.count("*").alias("views")
    )


def sliding_views(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Sliding windows: views per page over 4 minutes every 2, retries removed."""
    deduped = (
        clicks(spark, bootstrap, src, options)
        .withWatermark("ts", "2 minutes")
        .dropDuplicatesWithinWatermark(["event_id"])
    )
    return kafka_sink(to_kafka(_sliding(deduped), "page"), bootstrap, sink, checkpoint, options)


def sliding_views_random_ids(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Bug (a non-deterministic key): each row given an id from uuid() and keyed by it,
    so a row written again (a replay, another run) is a new row downstream."""
    deduped = (
        clicks(spark, bootstrap, src, options)
        .withWatermark("ts", "2 minutes")
        .dropDuplicatesWithinWatermark(["event_id"])
    )
    views = _sliding(deduped).withColumn("row_id", F.expr("uuid()"))
    return kafka_sink(to_kafka(views, "row_id"), bootstrap, sink, checkpoint, options)


def unique_clicks(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """dropDuplicates: each click once, however often it was sent (state kept forever)."""
    unique = clicks(spark, bootstrap, src, options).drop("timestamp").dropDuplicates(["event_id"])
    return kafka_sink(to_kafka(unique, "event_id"), bootstrap, sink, checkpoint, options)


def unique_clicks_per_batch(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Bug (per-batch state): dropDuplicates inside foreachBatch, so a retry in a later
    batch than its first copy is written again."""

    def write(batch: DataFrame, _batch_id: int) -> None:
        unique = batch.drop("timestamp").dropDuplicates(["event_id"])
        to_kafka(unique, "event_id").write.format("kafka").option(
            "kafka.bootstrap.servers", bootstrap
        ).option("topic", sink).save()

    frame = clicks(spark, bootstrap, src, options)
    return started(frame.writeStream.foreachBatch(write), checkpoint, options)


READING = "device STRING, seq INT, celsius DOUBLE, ts TIMESTAMP"


def _readings(
    spark: SparkSession, bootstrap: str, src: str, options: Mapping[str, str]
) -> DataFrame:
    parsed = F.from_json(F.col("value").cast("string"), READING).alias("r")
    return source(spark, bootstrap, src, options).select(parsed).select("r.*")


def unique_readings(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """dropDuplicatesWithinWatermark on a reading's identity, (device, seq)."""
    unique = (
        _readings(spark, bootstrap, src, options)
        .withWatermark("ts", "2 minutes")
        .dropDuplicatesWithinWatermark(["device", "seq"])
    )
    return kafka_sink(to_kafka(unique, "device"), bootstrap, sink, checkpoint, options)


def unique_readings_by_device(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Bug (a dedup key missing a field): deduplicated by device alone, so a device's
    later readings are dropped while its first is held, and kept once it expired: which
    depends on how far the watermark had moved."""
    unique = (
        _readings(spark, bootstrap, src, options)
        .withWatermark("ts", "2 minutes")
        .dropDuplicatesWithinWatermark(["device"])
    )
    return kafka_sink(to_kafka(unique, "device"), bootstrap, sink, checkpoint, options)


def unique_readings_unbounded(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Bug (a watermark the dedup cannot use): dropDuplicates on the reading's identity
    after a watermark on ts, which is not in the key, so Spark never evicts an id: the
    same rows as dropDuplicatesWithinWatermark, and state that grows without end."""
    unique = (
        _readings(spark, bootstrap, src, options)
        .withWatermark("ts", "2 minutes")
        .dropDuplicates(["device", "seq"])
    )
    return kafka_sink(to_kafka(unique, "device"), bootstrap, sink, checkpoint, options)


def reading(device: str, seq: int, minute: int, second: int, celsius: float) -> dict[str, object]:
    ts = f"2024-05-01T10:{minute:02d}:{second:02d}Z"
    return {"key": device, "value": {"device": device, "seq": seq, "celsius": celsius, "ts": ts}}


#: Two devices reporting every 90 seconds for 18 minutes; seq 2 of d1 sent twice.
READINGS = [
    reading(device, seq, (seq * 90 + offset) // 60, (seq * 90 + offset) % 60, 18.0 + seq / 4)
    for seq in range(12)
    for device, offset in (("d1", 0), ("d2", 30))
]
READINGS.insert(5, dict(READINGS[4]))
