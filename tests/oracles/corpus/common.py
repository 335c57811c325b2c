"""What the corpus's jobs share: the job contract's source and sinks, and the inputs.

Every job is ``job(spark, bootstrap, source, sink, checkpoint, *, options)``: the
oracle's options (``maxOffsetsPerTrigger``, the trigger) go to the Kafka source, and
the query is started with ``Trigger.AvailableNow``. A job's sink is a topic unless its
shape says ``sink="path"`` or ``"memory"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pyspark.sql import DataFrame, SparkSession, functions as F
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

CLICK = "event_id STRING, user STRING, page STRING, amount DOUBLE, ts TIMESTAMP"


def ship_by_value(module: str) -> None:
    """Pickle `module`'s functions whole for Spark's Python workers: they run where the
    test's folder is not on the path, so a function sent by reference would not load."""
    import sys

    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[module])


ship_by_value(__name__)

Job = Callable[..., StreamingQuery]


def source(
    spark: SparkSession, bootstrap: str, topic: str, options: Mapping[str, str]
) -> DataFrame:
    """The source topic as Spark's Kafka source gives it, with the oracle's options."""
    return (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .options(**{k: v for k, v in options.items() if k != "trigger"})
        .load()
    )


def clicks(
    spark: SparkSession, bootstrap: str, topic: str, options: Mapping[str, str]
) -> DataFrame:
    """The source's JSON clicks as columns, with the Kafka timestamp beside them."""
    parsed = F.from_json(F.col("value").cast("string"), CLICK).alias("c")
    return (
        source(spark, bootstrap, topic, options)
        .select(parsed, "timestamp")
        .select("c.*", "timestamp")
    )


def to_kafka(frame: DataFrame, key: str | Any) -> DataFrame:
    """Rows as Kafka records: `key` (a column name or a Column) and the row as JSON."""
    column = F.col(key) if isinstance(key, str) else key
    return frame.select(
        column.cast("string").alias("key"), F.to_json(F.struct(*frame.columns)).alias("value")
    )


def kafka_sink(
    frame: DataFrame,
    bootstrap: str,
    topic: str,
    checkpoint: str,
    options: Mapping[str, str],
    mode: str = "append",
) -> StreamingQuery:
    writer = (
        frame.writeStream.format("kafka")
        .outputMode(mode)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
    )
    return started(writer, checkpoint, options)


def started(
    writer: DataStreamWriter, checkpoint: str, options: Mapping[str, str]
) -> StreamingQuery:
    writer = writer.option("checkpointLocation", checkpoint)
    if options.get("trigger", "availableNow") == "availableNow":
        return writer.trigger(availableNow=True).start()
    return writer.trigger(processingTime=options["trigger"]).start()


def click(
    n: int, user: str, page: str, minute: int, second: int = 0, amount: float = 1.0
) -> dict[str, Any]:
    """A click keyed by its user, as a producer partitioning by user sends it."""
    ts = f"2024-05-01T10:{minute:02d}:{second:02d}Z"
    value = {"event_id": f"e{n}", "user": user, "page": page, "amount": amount, "ts": ts}
    return {"key": user, "value": value}


def retry(record: dict[str, Any]) -> dict[str, Any]:
    """The same click sent again (a client's retry): same id, key and content."""
    return {"key": record["key"], "value": dict(record["value"])}


#: Twelve minutes of clicks by three users, in event-time order; e3 and e8 retried.
CLICKS: list[dict[str, Any]] = [
    click(1, "ann", "/home", 0, 5, 10.0),
    click(2, "bob", "/home", 0, 40, 20.5),
    click(3, "ann", "/cart", 1, 10, 5.25),
]
CLICKS += [retry(CLICKS[2])]
CLICKS += [
    click(4, "cy", "/home", 2, 0, 7.0),
    click(5, "bob", "/cart", 3, 30, 1.5),
    click(6, "ann", "/pay", 4, 0, 3.0),
    click(7, "cy", "/cart", 6, 15, 8.0),
    click(8, "bob", "/pay", 7, 0, 2.0),
]
CLICKS += [retry(CLICKS[-1])]
CLICKS += [
    click(9, "ann", "/home", 9, 30, 4.0),
    click(10, "cy", "/pay", 11, 0, 6.5),
    click(11, "bob", "/home", 12, 0, 1.0),
]
