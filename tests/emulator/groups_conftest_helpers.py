"""Fixtures and helpers for the consumer group tests against real clients.

Kept out of conftest.py (owned by the emulator core, whose session-wide
`emulator` fixture these tests use) and imported by the group test modules. Client settings shorten heartbeats so rebalances take
milliseconds instead of the seconds real deployments use.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer

from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.emulator.state import BrokerSettings
from kafkatest.records import Record

#: librdkafka settings that make a group react within a fraction of a second.
FAST_GROUP_CONFIG: dict[str, Any] = {
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 100,
    "auto.offset.reset": "earliest",
    "enable.auto.commit": False,
    "topic.metadata.refresh.interval.ms": 1000,
}

#: The same for kafka-python and aiokafka, which share their option names.
PYTHON_CLIENT_GROUP_CONFIG: dict[str, Any] = {
    "auto_offset_reset": "earliest",
    "enable_auto_commit": False,
    "heartbeat_interval_ms": 100,
    "session_timeout_ms": 6000,
}


@pytest.fixture(scope="module")
def three_brokers() -> Iterator[EmulatorBroker]:
    """A cluster where most groups are coordinated by a broker other than the first
    (with Kafka's default 50 offsets partitions, led by the brokers in turn)."""
    settings = BrokerSettings(offsets_topic_num_partitions=50)
    with EmulatorBroker(brokers=3, settings=settings) as broker:
        yield broker


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def seed(broker: EmulatorBroker, topic: str, partitions: int, per_partition: int) -> None:
    broker.create_topic(topic, partitions)
    broker.produce(
        Record.make(topic, f"{p}-{i}", partition=p)
        for p in range(partitions)
        for i in range(per_partition)
    )


def seeded_values(partitions: int, per_partition: int) -> list[str]:
    """What `seed` wrote, sorted, to compare with what a consumer read."""
    return sorted(f"{p}-{i}" for p in range(partitions) for i in range(per_partition))


def group_consumer(broker: EmulatorBroker, group: str, **overrides: Any) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "group.id": group,
            **FAST_GROUP_CONFIG,
            **overrides,
        }
    )


def poll_values(consumer: Consumer, count: int, timeout_s: float = 20.0) -> list[str]:
    """Poll until `count` records arrived; fail with what came if time runs out."""
    values: list[str] = []
    deadline = time.monotonic() + timeout_s
    while len(values) < count:
        assert time.monotonic() < deadline, f"got {len(values)} of {count} records: {values}"
        message = consumer.poll(0.1)
        if message is None:
            continue
        assert message.error() is None, message.error()
        values.append(message.value().decode())
    return values


def eventually(condition: Callable[[], bool], what: str, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.05)
