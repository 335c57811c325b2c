"""Small jobs for scenarios and repro files, as the job contract (`kafkatest.jobs`) says:
`copy_stream` streams, `copy_batch` is a batch job. They copy records unchanged (key,
value, headers), so the sink traces back to the seed. `options` may name another
subscription (``subscribePattern``, ``assign``) than `source`, and a ``trigger``:
``availableNow``, an interval such as ``200 ms``, or ``realTime 5 minutes`` (Real-Time
Mode, PySpark 4.1+, batches of that length).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

SUBSCRIPTIONS = ("subscribe", "subscribePattern", "assign")
#: How a ``trigger`` option asks for Real-Time Mode: ``realTime 5 minutes``.
REAL_TIME = "realTime "
#: Harness settings in `options` that are not Kafka source options.
JOB_SETTINGS = ("trigger", "slowPartitionMs")


def _source_options(source: str, options: Mapping[str, str]) -> dict[str, str]:
    out = {k: v for k, v in options.items() if k not in JOB_SETTINGS}
    if not any(name in out for name in SUBSCRIPTIONS):
        out["subscribe"] = source
    out.setdefault("includeHeaders", "true")
    out.setdefault("startingOffsets", "earliest")
    return out


def _copy_columns(frame: DataFrame, options: Mapping[str, str]) -> DataFrame:
    from pyspark.sql import functions as F

    slow_ms = int(options.get("slowPartitionMs", "0"))
    if slow_ms:
        # Offset 0 of every partition but 0 takes `slow_ms` before it is passed on
        # (and nothing after it can overtake it), so the batch's sink write for
        # partition 0 lands long before the batch commits: a window to crash in.
        # The filter keeps the call from being pruned; it passes every row.
        pause = F.expr(
            "IF(partition > 0 AND offset = 0, "
            f"reflect('java.lang.Thread', 'sleep', CAST({slow_ms} AS BIGINT)), '')"
        )
        frame = frame.where(pause.isNotNull())
    return frame.select("key", "value", "headers")


def copy_stream(
    spark: SparkSession,
    bootstrap: str,
    source: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str] | None = None,
    kafka_options: Mapping[str, str] | None = None,
) -> StreamingQuery:
    """Copy every record of `source` to `sink` as a stream.

    `kafka_options` (security settings) reach both the source and the sink.
    """
    options = dict(options or {})
    reader = spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
    reader = reader.options(**(kafka_options or {}))
    frame = reader.options(**_source_options(source, options)).load()
    writer = (
        _copy_columns(frame, options)
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .options(**(kafka_options or {}))
        .option("topic", sink)
        .option("checkpointLocation", checkpoint)
        .queryName(f"copy-{sink}")
    )
    trigger = options.get("trigger", "availableNow")
    if trigger == "availableNow":
        writer = writer.trigger(availableNow=True)
    elif trigger.startswith(REAL_TIME):
        # Real-Time Mode (PySpark 4.1+): update mode only; the Kafka sink stays at-least-once.
        real_time = trigger[len(REAL_TIME) :].strip()
        writer = writer.outputMode("update").trigger(realTime=real_time)  # type: ignore[call-overload]
    else:
        writer = writer.trigger(processingTime=trigger)
    return writer.start()


def copy_batch(
    spark: SparkSession,
    bootstrap: str,
    source: str,
    sink: str,
    *,
    options: Mapping[str, str] | None = None,
    kafka_options: Mapping[str, str] | None = None,
) -> None:
    """Copy `source` to `sink` once, as a batch query (honours endingOffsets)."""
    options = dict(options or {})
    reader = spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
    reader = reader.options(**(kafka_options or {}))
    frame = reader.options(**_source_options(source, options)).load()
    _copy_columns(frame, options).write.format("kafka").option(
        "kafka.bootstrap.servers", bootstrap
    ).options(**(kafka_options or {})).option("topic", sink).save()
