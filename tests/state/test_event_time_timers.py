"""An event-time timer, end to end: a transformWithStateInPandas processor closes a
user's visit five minutes of event time after their last click. Event time moves only
with the data, so the test seeds a later click to move the watermark past the timer,
and reads the timers and the state back from the checkpoint between runs."""

from collections.abc import Iterator

import pandas as pd
import pyspark
import pytest

from kafkatest.seeding import seed
from kafkatest.sinks import topic_rows
from kafkatest.spark import wait_for_query
from kafkatest.state import read_state, rocksdb_state_store

LINE = tuple(map(int, pyspark.__version__.split(".")[:2]))
pytestmark = [
    pytest.mark.skipif(LINE < (4, 1), reason="timers in Python need PySpark 4.1+"),
    pytest.mark.kafka_backends("emulator"),  # Spark's side; the broker is the same
]

IDLE_MS = 5 * 60_000


def visits():
    """Counts a user's clicks; a timer at the last click's event time + 5 minutes
    emits the count and clears the state (defined in a function: see the TTL example)."""
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

    class Visits(StatefulProcessor):
        def init(self, handle):
            self.handle = handle
            self.clicks = handle.getValueState("clicks", "count LONG")

        def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
            frames = list(rows)
            count = (self.clicks.get()[0] if self.clicks.exists() else 0) + sum(map(len, frames))
            self.clicks.update((count,))
            last = max(int(frame["ts"].max().value // 1_000_000) for frame in frames)
            for timer in self.handle.listTimers():
                self.handle.deleteTimer(timer)
            self.handle.registerTimer(last + IDLE_MS)
            return iter([])

        def handleExpiredTimer(self, key, timerValues, expiredTimerInfo) -> Iterator[pd.DataFrame]:
            yield pd.DataFrame({"user": [key[0]], "clicks": [self.clicks.get()[0]]})
            self.clicks.clear()

        def close(self):
            pass

    return Visits()


def start(spark, bootstrap, topic, sink, checkpoint):
    from pyspark.sql import functions as F

    clicks = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .select(F.from_json(F.col("value").cast("string"), "user STRING, ts TIMESTAMP").alias("c"))
        .select("c.*")
        .withWatermark("ts", "1 minute")
    )
    closed = clicks.groupBy("user").transformWithStateInPandas(
        statefulProcessor=visits(),
        outputStructType="user STRING, clicks LONG",
        outputMode="Append",
        timeMode="EventTime",
    )
    return (
        closed.select(F.col("user").alias("key"), F.to_json(F.struct("*")).alias("value"))
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", sink)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )


def ms(ts: str) -> int:
    return int(pd.Timestamp(ts).value // 1_000_000)


def test_a_visit_closes_when_the_watermark_passes_its_timer(
    spark, kafka_broker, kafka_topic, checkpoint_dir
):
    pytest.importorskip("pyarrow", reason="transformWithStateInPandas needs pyarrow")
    source, sink = kafka_topic(), kafka_topic()

    def run(clicks):
        seed(kafka_broker, source, clicks)
        with rocksdb_state_store(spark):  # transformWithState keeps its state in RocksDB
            wait_for_query(
                start(spark, kafka_broker.bootstrap_servers, source, sink, str(checkpoint_dir))
            )

    run(
        [
            {"user": "ann", "ts": "2024-05-01T10:00:00Z"},
            {"user": "ann", "ts": "2024-05-01T10:02:00Z"},
        ]
    )
    timers = read_state(spark, checkpoint_dir, timers=True)
    assert [(t["key"]["user"], t["expiration_timestamp_ms"]) for t in timers] == [
        ("ann", ms("2024-05-01T10:07:00Z"))  # her last click + 5 minutes
    ]
    assert topic_rows(kafka_broker, sink) == []  # the watermark (10:01) is before it

    run([{"user": "bob", "ts": "2024-05-01T10:09:00Z"}])  # the watermark moves to 10:08
    assert [row["value"] for row in topic_rows(kafka_broker, sink)] == [
        {"user": "ann", "clicks": 2}
    ]
    held = read_state(spark, checkpoint_dir, state_var="clicks")
    assert [(row["key"]["user"], row["value"]["count"]) for row in held] == [("bob", 1)]
    timers = read_state(spark, checkpoint_dir, timers=True)
    assert [t["key"]["user"] for t in timers] == ["bob"]
