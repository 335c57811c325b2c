"""kafka-python and aiokafka against the emulator: produce then consume back."""

from __future__ import annotations

import asyncio
import time

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import TopicPartition as AioTopicPartition
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from kafkatest.brokers.emulator import EmulatorBroker

# Recent timestamps: older ones would be aged out by the 7-day default retention.
NOW_MS = (int(time.time()) - 3600) * 1000
RECORDS = [
    (f"k{i}".encode(), f"value-{i}".encode() * (i % 5 + 1), [("n", str(i).encode())], NOW_MS + i)
    for i in range(200)
]


# kafka-python needs extra libraries for snappy, lz4 and zstd; those codecs are covered
# through librdkafka in test_confluent_kafka.py.
@pytest.mark.parametrize("codec", [None, "gzip"])
def test_kafka_python_produce_and_assign_consume(
    emulator: EmulatorBroker, topic: str, codec: str | None
) -> None:
    producer = KafkaProducer(
        bootstrap_servers=emulator.bootstrap_servers, compression_type=codec, linger_ms=5
    )
    futures = [
        producer.send(topic, key=k, value=v, headers=h, timestamp_ms=ts, partition=0)
        for k, v, h, ts in RECORDS
    ]
    producer.flush(10)
    assert [f.get(10).offset for f in futures] == list(range(len(RECORDS)))
    producer.close()

    consumer = KafkaConsumer(
        bootstrap_servers=emulator.bootstrap_servers,
        enable_auto_commit=False,
        consumer_timeout_ms=3000,
    )
    consumer.assign([TopicPartition(topic, 0)])
    consumer.seek_to_beginning()
    got = []
    for message in consumer:
        got.append((message.key, message.value, list(message.headers), message.timestamp))
        if len(got) == len(RECORDS):
            break
    consumer.close()
    assert got == RECORDS


def test_aiokafka_produce_and_assign_consume(emulator: EmulatorBroker, topic: str) -> None:
    async def scenario() -> list[tuple[bytes | None, bytes | None, list, int]]:
        producer = AIOKafkaProducer(
            bootstrap_servers=emulator.bootstrap_servers, enable_idempotence=True
        )
        await producer.start()
        try:
            for key, value, headers, ts in RECORDS:
                await producer.send(
                    topic, value, key=key, headers=headers, timestamp_ms=ts, partition=0
                )
            await producer.flush()
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(
            bootstrap_servers=emulator.bootstrap_servers, enable_auto_commit=False
        )
        await consumer.start()
        try:
            partition = AioTopicPartition(topic, 0)
            consumer.assign([partition])
            await consumer.seek_to_beginning(partition)
            got: list[tuple[bytes | None, bytes | None, list, int]] = []
            deadline = time.monotonic() + 30
            while len(got) < len(RECORDS) and time.monotonic() < deadline:
                batches = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 10)
                for messages in batches.values():
                    got += [(m.key, m.value, list(m.headers), m.timestamp) for m in messages]
            return got
        finally:
            await consumer.stop()

    assert asyncio.run(scenario()) == RECORDS
