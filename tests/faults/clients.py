"""Real clients (librdkafka via confluent-kafka) that observe what a fault did."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from confluent_kafka import Consumer, KafkaError, Message, Producer, TopicPartition

from kafkatest.brokers.base import Broker


def producer(broker: Broker, **settings: Any) -> Producer:
    return Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0, **settings})


def deliver(p: Producer, topic: str, values: list[bytes], partition: int = 0) -> list[Any]:
    """Produce `values` and flush; one (error, offset) per value, in delivery order."""
    outcomes: list[Any] = []

    def done(err: KafkaError | None, msg: Message) -> None:
        outcomes.append((err, msg.offset()))

    for value in values:
        p.produce(topic, value, partition=partition, on_delivery=done)
    p.flush(60)
    return outcomes


@contextlib.contextmanager
def consumer(broker: Broker, **settings: Any) -> Iterator[Consumer]:
    c = Consumer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "group.id": "kafkatest-faults",
            "enable.auto.commit": False,
            **settings,
        }
    )
    try:
        yield c
    finally:
        c.close()


def first_event(c: Consumer, topic: str, partition: int, offset: int) -> Message:
    """The first message or error a consumer assigned at `offset` sees."""
    c.assign([TopicPartition(topic, partition, offset)])
    for _ in range(300):
        msg = c.poll(0.1)
        if msg is not None:
            return msg
    raise AssertionError(f"no message nor error from {topic}[{partition}] at {offset}")
