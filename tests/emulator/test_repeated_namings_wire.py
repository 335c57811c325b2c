"""Requests naming a topic, partition or group more than once, on every backend.

Observed on Kafka 4.1.1 (issue 44): ListOffsets answers each partition once, a
partition named more than once with INVALID_REQUEST (and no lookup); Metadata
describes the set of topics named; OffsetFetch answers every naming, in the
request's layout, a group named twice (v8+) twice. The emulator once looked a
ListOffsets partition up per naming, each lookup decoding every batch of a long
log below its start: 1,000 namings of a 20,000-batch log held every client for
three minutes (`test_time_index.py`, `test_repeated_namings_state.py`).
"""

from __future__ import annotations

import uuid
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from kio.schema.errors import ErrorCode
from kio.schema.list_offsets.v7.request import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.schema.offset_fetch.v7.request import OffsetFetchRequest, OffsetFetchRequestTopic
from kio.schema.offset_fetch.v8 import request as fetch_v8
from kio.static.primitive import i8, i32, i64
from raw_client import ask

from kafkatest import Broker

BATCHES = 300
BASE_MS = 1_700_000_000_000
LATEST, MAX_TIMESTAMP = -1, -3


def _name(kind: str) -> str:
    return f"repeated-{kind}-{uuid.uuid4().hex[:8]}"


def _partition(index: int, timestamp: int) -> ListOffsetsPartition:
    return ListOffsetsPartition(
        partition_index=i32(index), current_leader_epoch=i32(-1), timestamp=i64(timestamp)
    )


def _list_offsets(broker: Broker, *topics: tuple[str, tuple[ListOffsetsPartition, ...]]) -> Any:
    request = ListOffsetsRequest(
        replica_id=i32(-1),
        isolation_level=i8(0),
        topics=tuple(ListOffsetsTopic(name=name, partitions=parts) for name, parts in topics),
    )
    return ask(broker.bootstrap_servers, 2, 7, request)


def _answers(response: Any) -> list[tuple[str, int, ErrorCode, int]]:
    """(topic, partition, error, offset) of every answer, in a stable order: Kafka
    groups its answers by topic in a hash map's order."""
    return sorted(
        (t.name, p.partition_index, p.error_code, p.offset)
        for t in response.topics
        for p in t.partitions
    )


def test_a_partition_named_twice_is_refused_once(kafka_broker: Broker) -> None:
    topic, missing = _name("offsets"), _name("missing")
    kafka_broker.create_topic(topic, partitions=3)
    # Answered by every partition's leader: the broker knows it leads them all now.
    assert kafka_broker.latest_offsets(topic) == {0: 0, 1: 0, 2: 0}
    response = _list_offsets(
        kafka_broker,
        (topic, (_partition(0, LATEST), _partition(0, -2), _partition(1, LATEST))),
        (topic, (_partition(1, LATEST), _partition(2, LATEST))),
        (missing, (_partition(0, LATEST), _partition(0, LATEST))),
    )
    assert _answers(response) == sorted(
        [
            (topic, 0, ErrorCode.invalid_request, -1),
            (topic, 1, ErrorCode.invalid_request, -1),
            (topic, 2, ErrorCode.none, 0),
            (missing, 0, ErrorCode.invalid_request, -1),
        ]
    )


def test_a_topic_named_many_times_is_described_once(kafka_broker: Broker) -> None:
    topic, missing = _name("metadata"), _name("missing")
    kafka_broker.create_topic(topic, partitions=2)
    request = MetadataRequest(
        topics=(MetadataRequestTopic(topic_id=None, name=topic),) * 50
        + (MetadataRequestTopic(topic_id=None, name=missing),) * 3,
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    response = ask(kafka_broker.bootstrap_servers, 3, 12, request)
    assert sorted((t.name, t.error_code, len(t.partitions)) for t in response.topics) == sorted(
        [(topic, ErrorCode.none, 2), (missing, ErrorCode.unknown_topic_or_partition, 0)]
    )


def test_offset_fetch_answers_every_naming_in_the_request_s_layout(kafka_broker: Broker) -> None:
    topic, group = _name("committed"), _name("group")
    kafka_broker.create_topic(topic, partitions=2)
    consumer = Consumer(
        {"bootstrap.servers": kafka_broker.bootstrap_servers, "group.id": group, "log_level": 0}
    )
    try:
        consumer.commit(
            offsets=[TopicPartition(topic, 0, 5), TopicPartition(topic, 1, 7)], asynchronous=False
        )
    finally:
        consumer.close()
    request = OffsetFetchRequest(
        group_id=group,
        topics=(
            OffsetFetchRequestTopic(name=topic, partition_indexes=(i32(0), i32(0), i32(1))),
            OffsetFetchRequestTopic(name=topic, partition_indexes=(i32(0),)),
        ),
        require_stable=False,
    )
    response = ask(kafka_broker.bootstrap_servers, 9, 7, request)
    assert response.error_code == ErrorCode.none
    assert [
        (t.name, [(p.partition_index, p.committed_offset) for p in t.partitions])
        for t in response.topics
    ] == [(topic, [(0, 5), (0, 5), (1, 7)]), (topic, [(0, 5)])]

    one = fetch_v8.OffsetFetchRequestGroup(
        group_id=group,
        topics=(fetch_v8.OffsetFetchRequestTopics(name=topic, partition_indexes=(i32(1), i32(1))),),
    )
    every = fetch_v8.OffsetFetchRequestGroup(group_id=group, topics=None)
    batched = ask(
        kafka_broker.bootstrap_servers,
        9,
        8,
        fetch_v8.OffsetFetchRequest(groups=(one, one, every), require_stable=False),
    )
    assert [
        [(p.partition_index, p.committed_offset) for t in g.topics for p in t.partitions]
        for g in batched.groups
    ] == [[(1, 7), (1, 7)], [(1, 7), (1, 7)], [(0, 5), (1, 7)]]


def test_timestamp_lookups_over_a_log_truncated_near_its_end(kafka_broker: Broker) -> None:
    """One-record batches, then DeleteRecords to five before the end: the records
    below the log start stay in the segment, and no lookup may answer them."""
    topic = _name("truncated")
    # Kept for ever: the records' timestamps are years old, and retention would delete
    # them while the test looks them up.
    kafka_broker.create_topic(topic, partitions=1, config={"retention.ms": "-1"})
    producer = Producer(
        {
            "bootstrap.servers": kafka_broker.bootstrap_servers,
            "linger.ms": 0,
            "batch.num.messages": 1,
            "log_level": 0,
        }
    )
    for n in range(BATCHES):
        producer.produce(topic, b"x", partition=0, timestamp=BASE_MS + n * 1_000)
        producer.poll(0)
    assert producer.flush(60) == 0
    start = BATCHES - 5
    kafka_broker.delete_records(topic, {0: start})
    asked = {
        0: start,
        BASE_MS: start,
        BASE_MS + (start + 2) * 1_000 - 1: start + 2,
        MAX_TIMESTAMP: BATCHES - 1,
        BASE_MS + BATCHES * 1_000: -1,
    }
    found = {}
    for timestamp in asked:
        [topic_answer] = _list_offsets(kafka_broker, (topic, (_partition(0, timestamp),))).topics
        [answer] = topic_answer.partitions
        assert answer.error_code == ErrorCode.none
        found[timestamp] = answer.offset
    assert found == asked
