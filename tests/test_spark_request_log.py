"""The request log shows what Spark's Kafka connector asked for: its consumers fetch
with the isolation level the job set in `kafka.isolation.level`."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer

from kafkatest import Broker

TIMEOUT_S = 30


def connector_fetch_isolation(spark, broker: Broker, topic: str, isolation: str | None) -> set[int]:
    """The isolation levels of the Fetch requests one batch read sent."""
    reader = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", broker.bootstrap_servers)
        .option("subscribe", topic)
    )
    if isolation is not None:
        reader = reader.option("kafka.isolation.level", isolation)
    broker.record_requests()
    try:
        assert reader.load().count() == 1
        fetches = [
            entry
            for entry in broker.requests(api="Fetch")
            if entry.client_id and "spark-kafka" in entry.client_id
        ]
    finally:
        broker.stop_recording_requests()
    assert fetches, "the connector's consumers sent no Fetch"
    return {entry.request["isolation_level"] for entry in fetches}


@pytest.mark.kafka_backends("emulator")
def test_the_connectors_consumers_fetch_with_the_jobs_isolation_level(
    spark, kafka_broker: Broker, kafka_topic
) -> None:
    topic = kafka_topic()
    producer = Producer(kafka_broker.client_config())
    producer.produce(topic, b"v", partition=0)
    assert producer.flush(TIMEOUT_S) == 0
    assert connector_fetch_isolation(spark, kafka_broker, topic, "read_committed") == {1}
    assert connector_fetch_isolation(spark, kafka_broker, topic, None) == {0}
