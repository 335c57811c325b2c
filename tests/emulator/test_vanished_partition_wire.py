"""What a broker answers for a partition that vanished, over a bare socket, on every backend.

A topic recreated with fewer partitions (``recreate_topic(..., partitions=1)``) can
land between Spark's describe of its topics and its ListOffsets for them. Kafka's
admin client treats the answer, UNKNOWN_TOPIC_OR_PARTITION, as retriable and asks
the same broker again until ``default.api.timeout.ms`` (60 s) runs out; only then
does Spark's own retry describe the topic again and see the partition gone
(tests/scenarios/test_topic_deleted.py met this as a 60 s stall). The answer is
Kafka's own: the wait is the client's, on every backend.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode
from kio.schema.list_offsets.v9.request import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from kio.static.primitive import i8, i32, i64
from raw_client import ask

from kafkatest import Broker, Record
from kafkatest.faults import Faults

LIST_OFFSETS, LATEST = 2, -1


def _latest(broker: Broker, topic: str, partitions: range) -> dict[int, tuple[ErrorCode, int]]:
    """(error, offset) by partition, as the admin client's ListOffsets v9 hears them."""
    request = ListOffsetsRequest(
        replica_id=i32(-1),
        isolation_level=i8(0),
        topics=(
            ListOffsetsTopic(
                name=topic,
                partitions=tuple(
                    ListOffsetsPartition(
                        partition_index=i32(p), current_leader_epoch=i32(-1), timestamp=i64(LATEST)
                    )
                    for p in partitions
                ),
            ),
        ),
    )
    response: Any = ask(broker.bootstrap_servers, LIST_OFFSETS, 9, request)
    return {
        p.partition_index: (p.error_code, p.offset) for t in response.topics for p in t.partitions
    }


def test_a_partition_gone_with_its_topics_recreation_answers_unknown(
    kafka_broker: Broker, kafka_topic: Any, kafka_faults: Faults
) -> None:
    topic = kafka_topic(partitions=2)
    kafka_broker.produce([Record.make(topic, f"v{i}", partition=1) for i in range(3)])
    assert _latest(kafka_broker, topic, range(2)) == {
        0: (ErrorCode.none, 0),
        1: (ErrorCode.none, 3),
    }
    kafka_faults.recreate_topic(topic, partitions=1)
    assert _latest(kafka_broker, topic, range(2)) == {
        0: (ErrorCode.none, 0),
        1: (ErrorCode.unknown_topic_or_partition, -1),
    }
