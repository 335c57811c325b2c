"""A click dedup keeps bounded state with a watermark, and every click id without one."""

import pytest
from pyspark.sql import functions as F

from kafkatest.oracles import StateAssertionError, assert_state_bounded
from kafkatest.state import reader_refusal


def deduplicated_clicks(*, watermark: bool):
    """The job, to kafkatest's job contract: each click once, however often it was sent."""

    def start(spark, bootstrap, source, sink, checkpoint, *, options):
        clicks = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", source)
            .option("startingOffsets", "earliest")
            .options(**{k: v for k, v in options.items() if k != "trigger"})
            .load()
            .select(
                F.from_json(F.col("value").cast("string"), "event_id STRING, ts TIMESTAMP").alias(
                    "c"
                )
            )
            .select("c.*")
        )
        if watermark:  # a retry comes within a minute; older ids can go
            unique = clicks.withWatermark("ts", "1 minute").dropDuplicatesWithinWatermark(
                ["event_id"]
            )
        else:
            unique = clicks.dropDuplicates(["event_id"])
        return (
            unique.select(F.col("event_id").alias("key"), F.to_json(F.struct("*")).alias("value"))
            .writeStream.format("kafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("topic", sink)
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )

    return start


def clicks(batch):
    """Batch `batch` of the stream: five new clicks, two minutes of event time after
    the batch before."""
    minute = 2 * batch
    return [
        {"event_id": f"c{batch}-{n}", "ts": f"2024-05-01T10:{minute:02d}:{10 * n:02d}Z"}
        for n in range(5)
    ]


def test_a_dedup_with_a_watermark_keeps_bounded_state(spark, kafka_broker):
    report = assert_state_bounded(
        deduplicated_clicks(watermark=True), clicks, spark=spark, broker=kafka_broker
    )
    (dedup,) = report.operators
    assert dedup.name == "dedupeWithinWatermark"
    assert max(dedup.rows) <= 10  # the last batch or two, whatever the stream's length
    print(report.message())


def test_without_a_watermark_it_keeps_every_click_id(spark, kafka_broker):
    with pytest.raises(StateAssertionError, match="grows with the stream") as failed:
        assert_state_bounded(
            deduplicated_clicks(watermark=False), clicks, spark=spark, broker=kafka_broker
        )
    (dedup,) = failed.value.report.operators
    assert dedup.rows == [5, 10, 15, 20, 25, 30, 35, 40]  # after each of the 8 batches
    if not reader_refusal(spark):  # Spark 4.0+ reads the ids it kept from the store
        assert dedup.kept[0]["key"] == {"event_id": "c0-0"}
    print(failed.value)
