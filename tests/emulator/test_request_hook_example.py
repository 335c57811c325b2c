"""A request hook answers one Fetch with OFFSET_OUT_OF_RANGE: the consumer sees the
error the broker never had, and the next read (the hook spent) gets the record."""

import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition


def first_message(broker, topic):
    consumer = Consumer(
        {
            **broker.client_config(),
            "group.id": f"g-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "error",  # surface OFFSET_OUT_OF_RANGE instead of resetting
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    try:
        return consumer.poll(30)
    finally:
        consumer.close()


@pytest.mark.kafka_backends("emulator")
def test_one_fetch_answered_offset_out_of_range(kafka_broker, kafka_topic):
    topic = kafka_topic()
    producer = Producer(kafka_broker.client_config())
    producer.produce(topic, b"order-1", partition=0)
    assert producer.flush(30) == 0

    with kafka_broker.on_request(
        "Fetch", lambda request: "OFFSET_OUT_OF_RANGE", topic=topic, times=1
    ) as hook:
        message = first_message(kafka_broker, topic)
        assert message.error().code() == KafkaError._AUTO_OFFSET_RESET
        assert hook.calls == 1
        assert first_message(kafka_broker, topic).value() == b"order-1"
