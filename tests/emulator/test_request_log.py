"""`kafka_broker.record_requests()` / `requests()`: what clients asked the emulator.

Entries carry Kafka's API name, the decoded request, the answer's error codes and the
client's software name; the log is off until asked for, keeps only its latest
`limit` entries, and the `kafka` backend refuses it with what to do instead.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from kafkatest import Broker
from kafkatest.errors import BrokerError, UnsupportedOperation

TIMEOUT_S = 30
emulator_only = pytest.mark.kafka_backends("emulator")


@pytest.fixture
def logging_broker(kafka_broker: Broker) -> Iterator[Broker]:
    kafka_broker.record_requests()
    try:
        yield kafka_broker
    finally:
        kafka_broker.stop_recording_requests()


@emulator_only
def test_the_log_shows_what_each_client_asked_and_how_it_was_answered(
    logging_broker: Broker, kafka_topic
) -> None:
    topic = kafka_topic()
    producer = Producer({**logging_broker.client_config(), "client.id": "logged-producer"})
    producer.produce(topic, b"v", partition=0)
    assert producer.flush(TIMEOUT_S) == 0
    consumer = Consumer(
        {
            **logging_broker.client_config(),
            "client.id": "logged-consumer",
            "group.id": f"g-{uuid.uuid4().hex[:8]}",
            "isolation.level": "read_committed",
            "auto.offset.reset": "error",
        }
    )
    consumer.assign([TopicPartition(topic, 0, 5)])  # past the end: out of range
    try:
        message = consumer.poll(TIMEOUT_S)
    finally:
        consumer.close()
    assert message is not None and message.error().code() == KafkaError._AUTO_OFFSET_RESET

    (produce,) = logging_broker.requests(api="Produce", client_id="logged-producer")
    assert produce.request["topic_data"][0]["name"] == topic
    assert produce.error_codes == ()
    assert produce.client_software == "confluent-kafka-python"
    fetches = logging_broker.requests(api="Fetch", client_id="logged-consumer")
    assert fetches and {fetch.request["isolation_level"] for fetch in fetches} == {1}
    assert "OFFSET_OUT_OF_RANGE" in fetches[0].error_codes
    assert all(entry.client_id == "logged-consumer" for entry in fetches)


@emulator_only
def test_the_log_keeps_its_latest_entries_only(kafka_broker: Broker) -> None:
    with pytest.raises(ValueError, match="positive"):
        kafka_broker.record_requests(limit=0)
    kafka_broker.record_requests(limit=3)
    try:
        for _ in range(5):
            kafka_broker.topic_exists("kt-absent")
        assert len(kafka_broker.requests()) == 3
    finally:
        kafka_broker.stop_recording_requests()
    with pytest.raises(BrokerError, match="off"):
        kafka_broker.requests()


@pytest.mark.kafka_backends("kafka")
def test_the_kafka_backend_refuses_the_request_log(kafka_broker: Broker) -> None:
    with pytest.raises(UnsupportedOperation, match=r"own process.*emulator only"):
        kafka_broker.record_requests()
