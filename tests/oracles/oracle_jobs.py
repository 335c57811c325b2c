"""Payment jobs for the oracle tests: each bug an oracle exists for, and its correct twin.

All follow kafkatest's job contract, ``job(spark, bootstrap, source, sink, checkpoint,
*, options)``, passing the oracle's source options and trigger on. Payments are JSON
``{"payment_id", "account", "amount", "ts"}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pyspark.sql import DataFrame, SparkSession, functions as F
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

SCHEMA = "payment_id STRING, account STRING, amount DOUBLE, ts TIMESTAMP"


def payments(
    spark: SparkSession, bootstrap: str, source: str, options: Mapping[str, str]
) -> DataFrame:
    """The source topic's payments as columns, with the oracle's options on the reader."""
    raw = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .options(**{k: v for k, v in options.items() if k != "trigger"})
        .load()
    )
    parsed = F.from_json(F.col("value").cast("string"), SCHEMA).alias("p")
    return raw.select(parsed).select("p.*")


def started(
    writer: DataStreamWriter, checkpoint: str, options: Mapping[str, str]
) -> StreamingQuery:
    trigger = options.get("trigger", "availableNow")
    writer = writer.option("checkpointLocation", checkpoint)
    if trigger == "availableNow":
        return writer.trigger(availableNow=True).start()
    return writer.trigger(processingTime=trigger).start()


def to_kafka(frame: DataFrame, key: str) -> DataFrame:
    return frame.select(F.col(key).alias("key"), F.to_json(F.struct(*frame.columns)).alias("value"))


def dedup_stateful(
    spark: SparkSession,
    bootstrap: str,
    source: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Correct: dropDuplicates keeps every payment id seen in its state, across batches."""
    unique = payments(spark, bootstrap, source, options).dropDuplicates(["payment_id"])
    writer = (
        to_kafka(unique, "payment_id")
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", sink)
    )
    return started(writer, checkpoint, options)


Write = Callable[[DataFrame, int, str, str], Any]


def each_batch(write: Write) -> Callable[..., StreamingQuery]:
    """A job whose ``foreachBatch`` calls ``write(batch, batch_id, bootstrap, sink)``."""

    def job(
        spark: SparkSession,
        bootstrap: str,
        source: str,
        sink: str,
        checkpoint: str,
        *,
        options: Mapping[str, str],
    ) -> StreamingQuery:
        frame = payments(spark, bootstrap, source, options)
        writer = frame.writeStream.foreachBatch(
            lambda batch, batch_id: write(batch, batch_id, bootstrap, sink)
        )
        return started(writer, checkpoint, options)

    job.__doc__ = write.__doc__
    job.__name__ = job.__qualname__ = write.__name__.lstrip("_")
    return job


def _dedup_per_batch(batch: DataFrame, batch_id: int, bootstrap: str, sink: str) -> None:
    """Buggy: deduplicates inside each micro-batch only; a repeat in a later batch passes."""
    to_kafka(batch.dropDuplicates(["payment_id"]), "payment_id").write.format("kafka").option(
        "kafka.bootstrap.servers", bootstrap
    ).option("topic", sink).save()


def _append_files(batch: DataFrame, batch_id: int, bootstrap: str, sink: str) -> None:
    """Buggy: appends each batch's files, so a batch replayed after a crash is there twice."""
    batch.write.mode("append").parquet(sink)


def _overwrite_batch_dir(batch: DataFrame, batch_id: int, bootstrap: str, sink: str) -> None:
    """Correct: each batch overwrites its own directory, so a replay replaces its first try."""
    batch.write.mode("overwrite").parquet(f"{sink}/batch-{batch_id}")


dedup_per_batch = each_batch(_dedup_per_batch)
append_files = each_batch(_append_files)
overwrite_batch_dir = each_batch(_overwrite_batch_dir)


def windowed_totals(
    spark: SparkSession,
    bootstrap: str,
    source: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Per-account totals over 1-minute windows, with a 1-minute watermark (append mode)."""
    totals = (
        payments(spark, bootstrap, source, options)
        .withWatermark("ts", "1 minute")
        .groupBy(F.window("ts", "1 minute"), "account")
        .agg(F.round(F.sum("amount"), 2).alias("total"), F.count("*").alias("payments"))
    )
    writer = (
        to_kafka(totals, "account")
        .writeStream.format("kafka")
        .outputMode("append")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", sink)
    )
    return started(writer, checkpoint, options)


def payment(pid: str, account: str, amount: float, ts: str) -> dict[str, Any]:
    """A payment keyed by its account, as a producer partitioning by account sends it."""
    return {
        "key": account,
        "value": {"payment_id": pid, "account": account, "amount": amount, "ts": ts},
    }


#: Ten payments over three accounts; p2 and p5 are sent twice (a client's retry).
PAYMENTS = [
    payment("p1", "a", 10.0, "2024-05-01T10:00:05Z"),
    payment("p2", "b", 20.5, "2024-05-01T10:00:10Z"),
    payment("p3", "a", 5.25, "2024-05-01T10:00:40Z"),
    payment("p4", "c", 7.0, "2024-05-01T10:01:02Z"),
    payment("p2", "b", 20.5, "2024-05-01T10:00:10Z"),
    payment("p5", "c", 1.5, "2024-05-01T10:01:30Z"),
    payment("p6", "a", 3.0, "2024-05-01T10:01:45Z"),
    payment("p7", "b", 8.0, "2024-05-01T10:02:05Z"),
    payment("p5", "c", 1.5, "2024-05-01T10:01:30Z"),
    payment("p8", "a", 2.0, "2024-05-01T10:02:20Z"),
]
