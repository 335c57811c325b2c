"""applyInPandasWithState with a processing-time timeout, from Kafka under the query's
clock, its state read back from the checkpoint: what a session holds, the timeout
Spark keeps beside it, and nothing once the session timed out."""

from collections.abc import Iterator

import pandas as pd
import pyspark
import pytest
from confluent_kafka import Producer

from kafkatest.state import read_state, reader_refusal

LINE = tuple(map(int, pyspark.__version__.split(".")[:2]))
pytestmark = [
    pytest.mark.skipif(
        pd.__version__ >= "3" and LINE < (4, 2),
        reason="PySpark before 4.2 does not support pandas 3: applyInPandasWithState fails in it",
    ),
    pytest.mark.kafka_backends("emulator"),  # Spark's side; the broker is the same
]


def test_a_timed_out_session_leaves_no_state(
    spark, spark_clock, kafka_broker, kafka_topic, checkpoint_dir
):
    pytest.importorskip("pyarrow", reason="applyInPandasWithState needs a working pyarrow")
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    # In a project this lives in the job's package; here it is defined in the test,
    # so that Spark's Python workers get it by value.
    def close_idle_sessions(key, batches: Iterator[pd.DataFrame], state) -> Iterator[pd.DataFrame]:
        """Counts a user's clicks; emits ("closed", count) after 30 minutes without one."""
        if state.hasTimedOut:
            (clicks,) = state.get
            state.remove()
            yield pd.DataFrame({"user": [key[0]], "status": ["closed"], "clicks": [clicks]})
            return
        clicks = (state.get[0] if state.exists else 0) + sum(len(batch) for batch in batches)
        state.update((clicks,))
        state.setTimeoutDuration(30 * 60 * 1000)
        yield pd.DataFrame({"user": [key[0]], "status": ["open"], "clicks": [clicks]})

    topic = kafka_topic()
    producer = Producer(kafka_broker.client_config())
    for user in ["ann", "ann", "bob"]:
        producer.produce(topic, key=user, value="click")
    producer.flush(30)
    sessions = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .select(F.col("key").cast("string").alias("user"))
        .groupBy("user")
        .applyInPandasWithState(
            close_idle_sessions,
            outputStructType="user string, status string, clicks long",
            stateStructType="clicks long",
            outputMode="update",
            timeoutConf=GroupStateTimeout.ProcessingTimeTimeout,
        )
    )
    query = (
        sessions.writeStream.format("memory")
        .queryName("group_sessions")
        .outputMode("update")
        .trigger(processingTime="10 seconds")
        .option("checkpointLocation", str(checkpoint_dir))
        .start()
    )
    try:
        spark_clock.await_batch(query)
        if not reader_refusal(spark):  # Spark 4.0+ reads the state back
            held = {row["key"]["user"]: row["value"] for row in read_state(spark, checkpoint_dir)}
            assert {user: value["groupState"]["clicks"] for user, value in held.items()} == {
                "ann": 2,
                "bob": 1,
            }
            timeout = spark_clock.now_ms() + 30 * 60 * 1000
            assert {value["timeoutTimestamp"] for value in held.values()} == {timeout}

        spark_clock.advance(minutes=31)
        spark_clock.await_batch(query)
        closed = spark.sql("select user, clicks from group_sessions where status = 'closed'")
        assert {(row.user, row.clicks) for row in closed.collect()} == {("ann", 2), ("bob", 1)}
        if not reader_refusal(spark):
            assert read_state(spark, checkpoint_dir) == []  # no session for ann is held
    finally:
        query.stop()
        spark.catalog.dropTempView("group_sessions")
