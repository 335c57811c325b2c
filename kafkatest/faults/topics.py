"""Topic faults every backend can suffer, done over the wire with an AdminClient.

They go through the same client operations a test uses, so they behave alike on
the emulator and on real Kafka, and each one waits until the broker agrees (the
topic is gone, the new one is usable, the log start moved) before returning:
the job under test then meets the fault, never a half-applied one.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping

from confluent_kafka import KafkaException, TopicCollection

from kafkatest.brokers.base import Broker
from kafkatest.brokers.client import DEFAULT_TIMEOUT_S, wait_until
from kafkatest.errors import BrokerError


def topic_id(broker: Broker, topic: str, timeout_s: float = 10.0) -> str:
    """The topic's id as Kafka prints it (base64); a recreated topic gets a new one."""
    futures = broker.admin().describe_topics(TopicCollection([topic]), request_timeout=timeout_s)
    try:
        description = futures[topic].result(timeout=timeout_s)
    except KafkaException as exc:
        raise BrokerError(f"describing topic {topic!r} failed: {exc.args[0]}") from exc
    return str(description.topic_id)


def recreate_topic(
    broker: Broker,
    topic: str,
    partitions: int | None = None,
    config: Mapping[str, object] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> str:
    """Delete `topic` and create it again; returns the new topic id.

    Kafka finishes a deletion asynchronously, so creation is retried while the
    broker still says the topic exists; the call returns once every partition has
    a leader and answers ListOffsets under the new id.
    """
    old_id = topic_id(broker, topic)
    count = partitions if partitions is not None else broker.partition_count(topic)
    broker.delete_topic(topic, timeout_s)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            broker.create_topic(topic, partitions=count, config=config, timeout_s=timeout_s)
            break
        except BrokerError as exc:
            if "exist" not in str(exc).lower() or time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    new_id = ""

    def usable() -> bool:
        nonlocal new_id
        with contextlib.suppress(BrokerError, KafkaException):
            new_id = topic_id(broker, topic)
            return new_id != old_id and len(broker.latest_offsets(topic)) == count
        return False

    wait_until(usable, timeout_s, f"recreated topic {topic!r} is usable under a new id")
    return new_id


def delete_records(broker: Broker, topic: str, before: int | Mapping[int, int]) -> dict[int, int]:
    """Delete records below an offset (one for all partitions, or per partition).

    -1 means "everything up to the high watermark", as in Kafka's DeleteRecords.
    Returns the new log start offset per partition.
    """
    if isinstance(before, int):
        before = dict.fromkeys(range(broker.partition_count(topic)), before)
    return broker.delete_records(topic, before)


def age_out_records(
    broker: Broker,
    topic: str,
    wait_for_retention: Callable[[], None],
    retention_ms: int = 1,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> dict[int, int]:
    """Let time-based retention delete what is older than `retention_ms`.

    Sets retention.ms on the topic, lets the backend's retention run
    (`wait_for_retention`) until every partition's log start reached the end it
    had when called, then puts the topic's previous retention back, so records
    written afterwards stay. Returns the new log start offsets.
    """
    end = broker.latest_offsets(topic)
    previous = broker.topic_config(topic).get("retention.ms")
    broker.alter_topic_config(topic, {"retention.ms": retention_ms})
    try:

        def aged_out() -> bool:
            wait_for_retention()
            start = broker.earliest_offsets(topic)
            return all(start[p] >= end[p] for p in end)

        wait_until(aged_out, timeout_s, f"retention deleted the records of {topic!r}", 0.2)
    finally:
        if previous is not None:
            broker.alter_topic_config(topic, {"retention.ms": previous})
    return broker.earliest_offsets(topic)
