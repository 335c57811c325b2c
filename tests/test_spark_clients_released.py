"""Spark's cached Kafka producers go before the broker does: no reconnect warnings."""

from __future__ import annotations

import pytest

from kafkatest.spark import release_kafka_clients

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
