"""``__consumer_offsets`` on every backend: created by the first group lookup,
internal in Metadata, compacted, sized by ``offsets.topic.num.partitions``, seen by
librdkafka's regex subscriptions and closed to producers.
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from batch_builder import build_batch
from kio.schema.errors import ErrorCode
from kio.schema.find_coordinator.v6.request import FindCoordinatorRequest
from kio.schema.metadata.v12.request import MetadataRequest
from kio.static.primitive import i8, i16, i32
from raw_client import ask
from test_broker_configs_wire import broker_id, describe_broker

from kafkatest import Broker
from kafkatest.brokers.client import wait_until
from kafkatest.brokers.registry import make_broker
from kafkatest.pytest_plugin import unique_topic_name

OFFSETS = "__consumer_offsets"
PRODUCE, METADATA, FIND_COORDINATOR = 0, 3, 10


def all_topics(broker: Broker) -> dict[str, Any]:
    request = MetadataRequest(
        topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False
    )
    return {t.name: t for t in ask(broker.bootstrap_servers, METADATA, 12, request).topics}


def find_group_coordinator(broker: Broker, group: str) -> Any:
    request = FindCoordinatorRequest(key_type=i8(0), coordinator_keys=(group,))
    [answer] = ask(broker.bootstrap_servers, FIND_COORDINATOR, 6, request).coordinators
    return answer


def offsets_topic_ready(broker: Broker) -> None:
    group = f"g-{uuid.uuid4().hex[:8]}"
    wait_until(
        lambda: find_group_coordinator(broker, group).error_code == ErrorCode.none,
        60,
        "the group coordinator is available",
    )


@pytest.fixture
def fresh_broker(kafka_broker: Broker) -> Iterator[Broker]:
    """A new broker of the same backend: one that has never seen a group."""
    options: dict[str, object] = {"heap": "512m"} if kafka_broker.backend == "kafka" else {}
    broker = make_broker(kafka_broker.backend, **options)
    broker.start()
    try:
        yield broker
    finally:
        broker.close()


def test_the_first_group_lookup_creates_the_offsets_topic(fresh_broker: Broker) -> None:
    assert OFFSETS not in all_topics(fresh_broker)

    first = find_group_coordinator(fresh_broker, "first-group")
    assert (first.error_code, first.node_id, first.host, first.port) == (
        ErrorCode.coordinator_not_available,
        -1,
        "",
        -1,
    )
    offsets_topic_ready(fresh_broker)

    topic = all_topics(fresh_broker)[OFFSETS]
    # As many partitions as the broker's offsets.topic.num.partitions says (kafkatest
    # starts both backends with 1; Kafka's default is 50).
    node = broker_id(fresh_broker)
    [setting] = describe_broker(fresh_broker, node, ("offsets.topic.num.partitions",)).configs
    assert (topic.error_code, topic.is_internal) == (ErrorCode.none, True)
    assert len(topic.partitions) == int(setting.value)

    configs = fresh_broker.topic_config(OFFSETS)
    assert {k: configs[k] for k in ("cleanup.policy", "compression.type", "segment.bytes")} == {
        "cleanup.policy": "compact",
        "compression.type": "producer",
        "segment.bytes": "104857600",
    }


def test_librdkafka_regex_subscriptions_take_in_the_offsets_topic(kafka_broker: Broker) -> None:
    """librdkafka matches a regex against every topic Metadata lists, internal ones
    included (Java consumers leave internal topics out, on their side)."""
    from confluent_kafka import Consumer

    offsets_topic_ready(kafka_broker)
    topic = unique_topic_name("regex-internal")
    kafka_broker.create_topic(topic, partitions=1)
    consumer = Consumer(
        {
            "bootstrap.servers": kafka_broker.bootstrap_servers,
            "group.id": f"g-{uuid.uuid4().hex[:8]}",
            "topic.metadata.refresh.interval.ms": 500,
        }
    )
    try:
        consumer.subscribe([f"^(__consumer_offsets|{topic})$"])

        def both_assigned() -> bool:
            consumer.poll(0.1)
            return len(consumer.assignment()) == 2

        wait_until(both_assigned, 60, "both topics are assigned")
        assert {tp.topic for tp in consumer.assignment()} == {topic, OFFSETS}
    finally:
        consumer.close()
        kafka_broker.delete_topic(topic)


def test_producers_may_not_append_to_the_offsets_topic(kafka_broker: Broker) -> None:
    from kio.schema.produce.v11.request import (
        PartitionProduceData,
        ProduceRequest,
        TopicProduceData,
    )

    offsets_topic_ready(kafka_broker)
    request = ProduceRequest(
        transactional_id=None,
        acks=i16(-1),
        timeout=datetime.timedelta(seconds=10),
        topic_data=(
            TopicProduceData(
                name=OFFSETS,
                partition_data=(PartitionProduceData(index=i32(0), records=build_batch([b"x"])),),
            ),
        ),
    )
    [topic] = ask(kafka_broker.bootstrap_servers, PRODUCE, 11, request).responses
    [partition] = topic.partition_responses
    assert (partition.error_code, partition.base_offset) == (ErrorCode.invalid_topic_exception, -1)
