"""The query clock (`spark_clock`): processing time a test moves instead of waiting.

`current_timestamp()` stamps the clock's time (with the clock ignored the test would
see today's wall time); the stateful example with a 30-minute processing-time timeout
is test_spark_session_timeout_example.py, shown whole in docs/how-to/clocks-and-hooks.md.
"""

from __future__ import annotations

import pytest
from confluent_kafka import Producer

import kafkatest
from kafkatest import Broker
from kafkatest.clocks import duration_ms
from kafkatest.spark.clock import QueryClock, QueryClockError

TIMEOUT_S = 30


def produce(broker: Broker, topic: str, keys: list[str]) -> None:
    producer = Producer(broker.client_config())
    for key in keys:
        producer.produce(topic, key=key.encode(), value=b"click")
    assert producer.flush(TIMEOUT_S) == 0


def topic_stream(spark, broker: Broker, topic: str):
    """The topic from its start, as a stream."""
    return (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", broker.bootstrap_servers)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
    )


def test_current_timestamp_is_the_clock_time(
    spark, spark_clock: QueryClock, kafka_broker: Broker, kafka_topic, checkpoint_dir
) -> None:
    from pyspark.sql import functions as F

    topic = kafka_topic()
    produce(kafka_broker, topic, ["first"])
    name = f"stamped_{topic.replace('-', '_').replace('.', '_')}"
    query = (
        topic_stream(spark, kafka_broker, topic)
        .select(
            F.col("key").cast("string").alias("key"),
            F.unix_millis(F.current_timestamp()).alias("stamped_ms"),
        )
        .writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(checkpoint_dir))
        # Batches only when the clock says so: the record of the next day is written
        # before the clock moves, so the batch the move starts reads it (with the
        # default trigger, a batch could start between the move and the write).
        .trigger(processingTime="1 hour")
        .start()
    )
    started = spark_clock.now_ms()
    spark_clock.await_batch(query)
    produce(kafka_broker, topic, ["next day"])
    spark_clock.advance(days=1)
    spark_clock.await_batch(query)
    rows = spark.sql(f"select key, stamped_ms from {name}").collect()
    assert {(row.key, row.stamped_ms) for row in rows} == {
        ("first", started),
        ("next day", started + duration_ms(days=1)),
    }
    query.stop()


def test_a_query_started_outside_the_clock_is_named(spark, spark_clock: QueryClock) -> None:
    """await_batch on a query the clock does not drive says so instead of waiting."""
    query = spark.readStream.format("rate").load().writeStream.format("noop").start()
    try:
        spark_clock.await_batch(query)  # started inside: fine
    finally:
        query.stop()
    from kafkatest.spark.clock import query_clock

    with query_clock(spark) as other, pytest.raises(QueryClockError, match="does not run"):
        other.await_batch(query)


def test_one_advance_moves_every_clock_given() -> None:
    class Recording:
        def __init__(self) -> None:
            self.moved_ms = 0

        def advance(self, seconds=0, minutes=0, hours=0, days=0) -> int:
            self.moved_ms += duration_ms(seconds, minutes, hours, days)
            return self.moved_ms

        def now_ms(self) -> int:
            return self.moved_ms

    first, second = Recording(), Recording()
    kafkatest.advance(first, second, minutes=30, seconds=1.5)
    assert first.moved_ms == second.moved_ms == 1_801_500
    with pytest.raises(ValueError, match="forward"):
        kafkatest.advance(first, minutes=-1)
    with pytest.raises(TypeError, match="at least one clock"):
        kafkatest.advance(minutes=1)
    assert first.moved_ms == 1_801_500  # a refused advance moves nothing


def _batch_stamps(query) -> list[int]:
    from kafkatest.spark.queries import progress_reports

    return [_epoch_ms(report["timestamp"]) for report in progress_reports(query)]


def _epoch_ms(text: str) -> int:
    import datetime

    moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return int(moment.timestamp() * 1000)


def _every_minute(spark, broker: Broker, topic: str, checkpoint_dir):
    return (
        topic_stream(spark, broker, topic)
        .writeStream.format("noop")
        .option("checkpointLocation", str(checkpoint_dir))
        .trigger(processingTime="1 minute")
        .start()
    )


def test_part_of_an_interval_fires_nothing_and_the_rest_fires_at_the_whole_minute(
    spark, spark_clock: QueryClock, kafka_broker: Broker, kafka_topic, checkpoint_dir
) -> None:
    """Spark fires a processing-time trigger at whole multiples of its interval since the
    epoch; the clock starts at midnight UTC, a multiple of every interval dividing a
    day, so two 30-second steps fire a 1-minute trigger at the second, whenever the test
    runs (from the wall time, half the runs fired at the first step)."""
    start = spark_clock.now_ms()
    assert start % duration_ms(days=1) == 0
    query = _every_minute(spark, kafka_broker, kafka_topic(), checkpoint_dir)
    spark_clock.await_batch(query)  # the first batch runs at the start
    spark_clock.advance(seconds=30)
    spark_clock.advance(seconds=30)
    spark_clock.await_batch(query)
    assert _batch_stamps(query) == [start, start + 60_000]
    query.stop()


def test_a_clock_started_off_the_minute_fires_at_the_first_whole_minute_it_reaches(
    spark, kafka_broker: Broker, kafka_topic, checkpoint_dir
) -> None:
    from kafkatest.spark import query_clock

    midnight = 1_714_521_600_000  # 2024-05-01T00:00:00Z
    with query_clock(spark, start_ms=midnight + 45_000) as clock:
        query = _every_minute(spark, kafka_broker, kafka_topic(), checkpoint_dir)
        clock.await_batch(query)
        clock.advance(seconds=30)  # past 00:01:00: the batch is due, at the clock's time
        clock.await_batch(query)
        assert _batch_stamps(query) == [midnight + 45_000, midnight + 75_000]
        query.stop()
