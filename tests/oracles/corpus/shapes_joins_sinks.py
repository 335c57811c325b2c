"""Joins and foreachBatch sinks: correct, and as they go wrong."""

from __future__ import annotations

import os
from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession, functions as F
from pyspark.sql.streaming import StreamingQuery

from .common import clicks, kafka_sink, ship_by_value, source, started, to_kafka

TIERS = [("ann", "gold"), ("bob", "silver"), ("cy", "gold")]

ship_by_value(__name__)


def tiered_clicks(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Stream-static join: each click with its user's tier, from a static table."""
    tiers = spark.createDataFrame(TIERS, "user STRING, tier STRING")
    joined = clicks(spark, bootstrap, src, options).drop("timestamp").join(tiers, "user")
    return kafka_sink(to_kafka(joined, "event_id"), bootstrap, sink, checkpoint, options)


def tiered_clicks_appended(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Bug (append without the batch id): foreachBatch appends each batch's joined rows
    to the table, so a batch replayed after a crash is there twice."""
    tiers = spark.createDataFrame(TIERS, "user STRING, tier STRING")

    def write(batch: DataFrame, _batch_id: int) -> None:
        batch.join(tiers, "user").write.mode("append").parquet(sink)

    frame = clicks(spark, bootstrap, src, options).drop("timestamp")
    return started(frame.writeStream.foreachBatch(write), checkpoint, options)


ORDER_EVENT = "kind STRING, order_id STRING, amount DOUBLE, ts TIMESTAMP"


def _events(spark: SparkSession, bootstrap: str, src: str, options: Mapping[str, str]) -> DataFrame:
    parsed = F.from_json(F.col("value").cast("string"), ORDER_EVENT).alias("o")
    return source(spark, bootstrap, src, options).select(parsed).select("o.*")


def _paid_orders(orders: DataFrame, payments: DataFrame) -> DataFrame:
    o, p = orders.alias("o"), payments.alias("p")
    joined = o.join(
        p,
        F.expr("o.order_id = p.order_id AND p.ts BETWEEN o.ts AND o.ts + INTERVAL 10 MINUTES"),
    )
    return joined.select(
        F.col("o.order_id").alias("order_id"),
        F.col("o.amount").alias("ordered"),
        F.col("p.amount").alias("paid"),
        F.col("p.ts").alias("paid_at"),
    )


def paid_orders(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Stream-stream join: each order with its payments within 10 minutes, both sides
    watermarked, so the join's state is evicted."""
    events = _events(spark, bootstrap, src, options)
    orders = events.where("kind = 'order'").withWatermark("ts", "5 minutes")
    payments = events.where("kind = 'payment'").withWatermark("ts", "5 minutes")
    rows = _paid_orders(orders, payments)
    return kafka_sink(to_kafka(rows, "order_id"), bootstrap, sink, checkpoint, options)


def paid_orders_unbounded(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Bug (a join without a watermark on one side): the payments side is kept forever.
    Its output is the same; its state grows without end (assert_state_bounded's job)."""
    events = _events(spark, bootstrap, src, options)
    orders = events.where("kind = 'order'").withWatermark("ts", "5 minutes")
    payments = events.where("kind = 'payment'")
    rows = _paid_orders(orders, payments)
    return kafka_sink(to_kafka(rows, "order_id"), bootstrap, sink, checkpoint, options)


def order_event(kind: str, order: str, minute: int, amount: float) -> dict[str, object]:
    ts = f"2024-05-01T10:{minute:02d}:00Z"
    return {"key": order, "value": {"kind": kind, "order_id": order, "amount": amount, "ts": ts}}


#: Five orders and their payments, in time order; o3 is paid too late to match.
ORDER_EVENTS = [
    order_event("order", "o1", 0, 30.0),
    order_event("order", "o2", 1, 12.5),
    order_event("payment", "o1", 2, 30.0),
    order_event("order", "o3", 3, 8.0),
    order_event("payment", "o2", 5, 12.5),
    order_event("order", "o4", 6, 40.0),
    order_event("payment", "o4", 8, 40.0),
    order_event("order", "o5", 9, 5.0),
    order_event("payment", "o5", 10, 5.0),
    order_event("payment", "o3", 15, 8.0),
]


def upsert_new_clicks(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """foreachBatch upsert, idempotent by batch id: each batch writes the clicks no
    earlier batch wrote into a directory named by its batch id, overwriting it, so a
    replayed batch replaces its first try and a retried click is written once."""

    def write(batch: DataFrame, batch_id: int) -> None:
        fresh = batch.dropDuplicates(["event_id"])
        if os.path.isdir(sink):
            earlier = batch.sparkSession.read.parquet(sink).where(F.col("batch_id") != batch_id)
            fresh = fresh.join(earlier.select("event_id"), "event_id", "left_anti")
        fresh.write.mode("overwrite").parquet(f"{sink}/batch_id={batch_id}")

    frame = clicks(spark, bootstrap, src, options).drop("timestamp")
    return started(frame.writeStream.foreachBatch(write), checkpoint, options)


def upsert_appending(
    spark: SparkSession,
    bootstrap: str,
    src: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Bug (append without the batch id): each batch appended as it comes."""

    def write(batch: DataFrame, _batch_id: int) -> None:
        batch.dropDuplicates(["event_id"]).write.mode("append").parquet(sink)

    frame = clicks(spark, bootstrap, src, options).drop("timestamp")
    return started(frame.writeStream.foreachBatch(write), checkpoint, options)
