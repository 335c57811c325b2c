"""Spark's clients go before what they use: cached producers before the broker (no
reconnect warnings), running queries before their topics (no topic created again)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafkatest import seed
from kafkatest.sinks import topic_rows
from kafkatest.spark import release_kafka_clients, wait_for_rows

pytestmark = pytest.mark.spark

POOL = "org.apache.spark.sql.kafka010.producer.InternalKafkaProducerPool$"


def _cached_producers(spark) -> int:
    jvm = spark.sparkContext._jvm
    pool = (
        jvm.java.lang.Thread.currentThread()
        .getContextClassLoader()
        .loadClass(POOL)
        .getField("MODULE$")
        .get(None)
    )
    # The object's pool instance is a private field; its size is what we want to see.
    field = pool.getClass().getDeclaredField("pool")
    field.setAccessible(True)
    return int(field.get(pool).getAsMap().size())


def test_release_closes_the_connectors_cached_producers(spark, kafka_broker, kafka_topic):
    topic = kafka_topic()
    frame = spark.createDataFrame([("k", "v")], "key string, value string")
    (
        frame.write.format("kafka")
        .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
        .option("topic", topic)
        .save()
    )
    assert _cached_producers(spark) >= 1  # the sink's producer stays cached after the write
    assert release_kafka_clients() is True
    assert _cached_producers(spark) == 0


@pytest.fixture
def gone_at_the_end(kafka_broker) -> Iterator[list[str]]:
    """Topics that must not exist once every other fixture of the test has torn down."""
    topics: list[str] = []
    yield topics
    assert [t for t in topics if kafka_broker.topic_exists(t)] == []


def test_a_running_query_stops_before_its_topics_are_deleted(
    gone_at_the_end, spark, kafka_broker, kafka_topic, checkpoint_dir
):
    """`spark` listed before `kafka_topic` tears down after it: the query still ran when
    the topics went, and its consumers, polling on, created the source again
    (allow.auto.create.topics); the teardown then waited 30 s for it to be gone."""
    source, sink = kafka_topic(), kafka_topic()
    gone_at_the_end.extend([source, sink])
    query = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .load()
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
        .option("topic", sink)
        .option("checkpointLocation", str(checkpoint_dir))
        .trigger(continuous="1 second")  # tasks that poll the source until stopped
        .start()
    )
    seed(kafka_broker, source, [{"n": 1}])
    wait_for_rows(lambda: topic_rows(kafka_broker, sink), 1, query=query)
