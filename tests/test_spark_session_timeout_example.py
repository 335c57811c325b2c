"""A job that closes a user's session after 30 minutes without clicks, tested in
seconds: the query runs on `spark_clock`, and the test moves processing time."""

from collections.abc import Iterator

import pandas as pd
import pyspark
import pytest
from confluent_kafka import Producer

pytestmark = pytest.mark.skipif(
    pd.__version__ >= "3" and tuple(map(int, pyspark.__version__.split(".")[:2])) < (4, 2),
    reason="PySpark before 4.2 does not support pandas 3: applyInPandasWithState fails in it",
)


def test_a_session_closes_after_30_idle_minutes(
    spark, spark_clock, kafka_broker, kafka_topic, checkpoint_dir
):
    pytest.importorskip("pyarrow", reason="applyInPandasWithState needs a working pyarrow")
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    # In a project this lives in the job's package; here it is defined in the test,
    # so that Spark's Python workers get it by value.
    def close_idle_sessions(key: tuple, batches: Iterator[pd.DataFrame], state) -> Iterator:
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
        producer.produce(topic, key=user.encode(), value=b"click")
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
        .queryName("sessions")
        .outputMode("update")
        .trigger(processingTime="10 seconds")
        .option("checkpointLocation", str(checkpoint_dir))
        .start()
    )

    def closed():
        rows = spark.sql("select user, clicks from sessions where status = 'closed'").collect()
        return {(row.user, row.clicks) for row in rows}

    spark_clock.await_batch(query)  # the first trigger fires at once: two open sessions
    spark_clock.advance(minutes=29)
    spark_clock.await_batch(query)
    assert closed() == set()  # idle for 29 minutes: still open
    spark_clock.advance(minutes=2)
    spark_clock.await_batch(query)
    assert closed() == {("ann", 2), ("bob", 1)}
    query.stop()
