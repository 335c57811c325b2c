"""DescribeTopicPartitions paging over a bare socket, as Kafka pages it.

kafka-topics --describe (tests/compat) asks for at most 2000 partitions per page,
so its pages never end mid-topic; the cursor rules are checked here instead.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from kio.index import load_payload_module
from kio.schema.describe_topic_partitions.v0.request import (
    Cursor,
    DescribeTopicPartitionsRequest,
    TopicRequest,
)
from kio.schema.errors import ErrorCode
from kio.serial import entity_reader
from kio.static.constants import EntityType
from raw_client import connect, encode, read_frame, request_frame

from kafkatest.brokers.emulator import EmulatorBroker

API_KEY = 75


def describe(
    broker: EmulatorBroker, names: list[str], limit: int, cursor: tuple[str, int] | None = None
) -> Any:
    request = DescribeTopicPartitionsRequest(
        topics=tuple(TopicRequest(name=n) for n in names),
        response_partition_limit=limit,
        cursor=None if cursor is None else Cursor(topic_name=cursor[0], partition_index=cursor[1]),
    )
    with connect(broker.bootstrap_servers) as sock:
        sock.sendall(request_frame(API_KEY, 0, 7, encode(request)))
        reply = read_frame(sock)
    assert reply is not None and struct.unpack(">i", reply[:4])[0] == 7
    types = load_payload_module(API_KEY, 0, EntityType.response)
    response, _ = entity_reader(types.DescribeTopicPartitionsResponse)(reply, 5)
    return response


def page(response: Any) -> tuple[list[tuple[str, list[int]]], tuple[str, int] | None]:
    topics = [(t.name, [p.partition_index for p in t.partitions]) for t in response.topics]
    cursor = response.next_cursor
    return topics, None if cursor is None else (cursor.topic_name, cursor.partition_index)


def test_pages_follow_topic_name_order_and_resume_at_the_cursor(
    emulator: EmulatorBroker, new_topic: Callable[[], str]
) -> None:
    first, second = sorted([new_topic(), new_topic()])
    emulator.create_topic(first, partitions=3)
    emulator.create_topic(second, partitions=2)
    names = [second, first]  # the broker sorts them

    assert page(describe(emulator, names, limit=2)) == ([(first, [0, 1])], (first, 2))
    assert page(describe(emulator, names, limit=2, cursor=(first, 2))) == (
        [(first, [2]), (second, [0])],
        (second, 1),
    )
    assert page(describe(emulator, names, limit=2, cursor=(second, 1))) == ([(second, [1])], None)
    # A page that ends exactly at a topic's end points at the next topic's start.
    assert page(describe(emulator, names, limit=3)) == ([(first, [0, 1, 2])], (second, 0))


def test_partitions_carry_empty_eligible_leader_lists_and_unknown_topics_an_error(
    emulator: EmulatorBroker, new_topic: Callable[[], str]
) -> None:
    topic, missing = new_topic(), new_topic()
    emulator.create_topic(topic, partitions=1)
    response = describe(emulator, [topic, missing], limit=100)
    by_name = {t.name: t for t in response.topics}
    found, unknown = by_name[topic], by_name[missing]
    assert found.error_code == ErrorCode.none and found.topic_id is not None
    [partition] = found.partitions
    assert (partition.eligible_leader_replicas, partition.last_known_elr) == ((), ())
    assert partition.isr_nodes == partition.replica_nodes == (partition.leader_id,)
    assert (unknown.error_code, unknown.topic_id, unknown.partitions) == (
        ErrorCode.unknown_topic_or_partition,
        None,  # kio reads Kafka's all-zero topic id as None
        (),
    )
    assert response.next_cursor is None
