"""A transformWithStateInPandas processor run from Kafka under the query's clock: its
processing-time timer closes a user's session after 30 idle minutes, a TTL forgets the
pages a user saw after 10, and the test reads the state and the timers back from the
checkpoint while the query runs."""

from collections.abc import Iterator

import pandas as pd
import pyspark
import pytest
from confluent_kafka import Producer

from kafkatest.state import read_state, rocksdb_state_store

LINE = tuple(map(int, pyspark.__version__.split(".")[:2]))
pytestmark = [
    pytest.mark.skipif(LINE < (4, 1), reason="timers in Python need PySpark 4.1+"),
    pytest.mark.kafka_backends("emulator"),  # Spark's side; the broker is the same
]

MINUTE_MS = 60_000


# --8<-- [start:processor]
def idle_sessions():
    """The processor: counts a user's clicks, keeps the pages seen for 10 minutes (TTL),
    and emits ("closed", count) 30 minutes after the user's last click.

    In a project this lives in the job's package; here it is defined in a function, so
    that Spark's Python workers get the class by value."""
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

    class IdleSessions(StatefulProcessor):
        def init(self, handle):
            self.handle = handle
            self.clicks = handle.getValueState("clicks", "count LONG")
            self.pages = handle.getListState("pages", "page STRING", ttlDurationMs=10 * MINUTE_MS)

        def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
            frames = list(rows)
            count = (self.clicks.get()[0] if self.clicks.exists() else 0) + sum(map(len, frames))
            self.clicks.update((count,))
            for frame in frames:
                self.pages.appendList([(page,) for page in frame["page"]])
            for timer in self.handle.listTimers():  # one timer: the last click's
                self.handle.deleteTimer(timer)
            now = timerValues.getCurrentProcessingTimeInMs()
            self.handle.registerTimer(now + 30 * MINUTE_MS)
            yield pd.DataFrame({"user": [key[0]], "status": ["open"], "clicks": [count]})

        def handleExpiredTimer(self, key, timerValues, expiredTimerInfo) -> Iterator[pd.DataFrame]:
            count = self.clicks.get()[0]
            self.clicks.clear()
            yield pd.DataFrame({"user": [key[0]], "status": ["closed"], "clicks": [count]})

        def close(self):
            pass

    return IdleSessions()


def sessions(spark, bootstrap, topic):
    from pyspark.sql import functions as F

    clicks = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .select(
            F.col("key").cast("string").alias("user"), F.col("value").cast("string").alias("page")
        )
    )
    return clicks.groupBy("user").transformWithStateInPandas(
        statefulProcessor=idle_sessions(),
        outputStructType="user STRING, status STRING, clicks LONG",
        outputMode="Update",
        timeMode="ProcessingTime",
    )


def test_a_session_closes_after_30_idle_minutes_and_its_state_goes(
    spark, spark_clock, kafka_broker, kafka_topic, checkpoint_dir
):
    pytest.importorskip("pyarrow", reason="transformWithStateInPandas needs pyarrow")
    topic = kafka_topic()
    producer = Producer(kafka_broker.client_config())
    for user, page in [("ann", "/home"), ("ann", "/cart"), ("bob", "/home")]:
        producer.produce(topic, key=user, value=page)
    producer.flush(30)

    with rocksdb_state_store(spark):  # transformWithState keeps its state in RocksDB
        query = (
            sessions(spark, kafka_broker.bootstrap_servers, topic)
            .writeStream.format("memory")
            .queryName("idle_sessions")
            .outputMode("update")
            .trigger(processingTime="1 minute")
            .option("checkpointLocation", str(checkpoint_dir))
            .start()
        )
    try:
        spark_clock.await_batch(query)  # the first batch: ann and bob start a session
        started = spark_clock.now_ms()

        clicks = read_state(spark, checkpoint_dir, state_var="clicks")
        assert {row["key"]["user"]: row["value"]["count"] for row in clicks} == {"ann": 2, "bob": 1}
        timers = read_state(spark, checkpoint_dir, timers=True)
        assert {row["key"]["user"]: row["expiration_timestamp_ms"] for row in timers} == {
            "ann": started + 30 * MINUTE_MS,
            "bob": started + 30 * MINUTE_MS,
        }
        pages = read_state(spark, checkpoint_dir, state_var="pages")
        # A variable with a TTL keeps each element's expiry beside it.
        assert sorted(row["list_element"]["value"]["page"] for row in pages) == [
            "/cart",
            "/home",
            "/home",
        ]
        expiries = {row["list_element"]["ttlExpirationMs"] for row in pages}
        assert expiries == {started + 10 * MINUTE_MS}

        spark_clock.advance(minutes=11)  # past the pages' 10-minute TTL
        spark_clock.await_batch(query)
        assert read_state(spark, checkpoint_dir, state_var="pages") == []
        assert len(read_state(spark, checkpoint_dir, state_var="clicks")) == 2  # no TTL

        spark_clock.advance(minutes=20)  # 31 minutes idle: the timers fire
        spark_clock.await_batch(query)
        closed = spark.sql("select user, clicks from idle_sessions where status = 'closed'")
        assert {(row.user, row.clicks) for row in closed.collect()} == {("ann", 2), ("bob", 1)}
        assert read_state(spark, checkpoint_dir, state_var="clicks") == []
        assert read_state(spark, checkpoint_dir, timers=True) == []
    finally:
        query.stop()
        spark.catalog.dropTempView("idle_sessions")


# --8<-- [end:processor]


@pytest.mark.skipif(LINE < (4, 2), reason="TwsTester is new in PySpark 4.2")
def test_twstester_gives_one_key_the_answer_the_query_gave(
    spark, spark_clock, kafka_broker, kafka_topic, checkpoint_dir
):
    """TwsTester runs the processor for one key in memory (no Kafka, no watermark, no
    TTL); on ann's clicks it must say what the query said for ann."""
    pytest.importorskip("pyarrow", reason="transformWithStateInPandas needs pyarrow")
    from pyspark.sql.streaming.tws_tester import TwsTester

    topic = kafka_topic()
    producer = Producer(kafka_broker.client_config())
    for page in ["/home", "/cart", "/pay"]:
        producer.produce(topic, key="ann", value=page)
    producer.flush(30)
    with rocksdb_state_store(spark):
        query = (
            sessions(spark, kafka_broker.bootstrap_servers, topic)
            .writeStream.format("memory")
            .queryName("ann_sessions")
            .outputMode("update")
            .trigger(processingTime="1 minute")
            .option("checkpointLocation", str(checkpoint_dir))
            .start()
        )
    try:
        spark_clock.await_batch(query)
        spark_clock.advance(minutes=31)
        spark_clock.await_batch(query)
        from_query = spark.sql("select status, clicks from ann_sessions").toPandas()
    finally:
        query.stop()
        spark.catalog.dropTempView("ann_sessions")
    assert len(from_query) == 2  # opened, then closed

    tester = TwsTester(idle_sessions(), timeMode="ProcessingTime", outputMode="Update")  # at 0 ms
    opened = tester.testInPandas(("ann",), pd.DataFrame({"page": ["/home", "/cart", "/pay"]}))
    closed = tester.setProcessingTime(31 * MINUTE_MS)
    from_tester = pd.concat([opened, closed])[["status", "clicks"]]

    key = ["status", "clicks"]
    assert from_tester.sort_values(key).to_dict("records") == from_query.sort_values(key).to_dict(
        "records"
    )
    assert tester.peekValueState("clicks", ("ann",)) is None  # cleared when it closed
    # What TwsTester does not simulate: TTL. The query dropped ann's pages after 10
    # minutes; the tester keeps them.
    assert len(tester.peekListState("pages", ("ann",))) == 3
