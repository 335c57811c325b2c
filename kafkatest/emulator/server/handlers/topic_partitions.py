"""DescribeTopicPartitions (KIP-966): the Java Admin client's paged topic description.

Kafka 3.8+ Admin clients (kafka-topics.sh --describe) prefer it to Metadata; without
it they fall back and print "Elr: N/A". Paging follows Kafka: topics in name order,
at most `response_partition_limit` partitions per answer, and a cursor naming the
first topic and partition the next request should start at.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.handlers.metadata import describe_topic, missing_topic_error
from kafkatest.emulator.server.operations_field import OPERATIONS_OMITTED, unrestricted_operations
from kafkatest.emulator.server.pacing import Pacer
from kafkatest.emulator.server.repeats import Answers, Encoded
from kafkatest.emulator.server.responses import make, respond, response_types
from kafkatest.emulator.state.acls import ResourceType
from kafkatest.emulator.state.topics import is_internal_name

#: Kafka's max.request.partition.size.limit default: the cap on any requested page size.
MAX_PARTITIONS_PER_RESPONSE = 2000
#: Every topic this API describes, known or not, carries its authorized operations.
_TOPIC_OPERATIONS = unrestricted_operations(ResourceType.TOPIC, asked=True)


@handles(75, 0, 0)
async def describe_topic_partitions(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    cursor = request.cursor
    cursor_topic = cursor.topic_name if cursor is not None else ""
    describe_all = not request.topics
    candidates = ctx.state.topics if describe_all else request.topics
    names = sorted({t.name for t in candidates if t.name >= cursor_topic})
    if cursor is not None and (
        cursor.partition_index < 0 or (not describe_all and cursor_topic not in names)
    ):
        # Kafka rejects the whole request; each requested topic carries the error.
        answers: Answers[str] = Answers()
        rejected = await answers.each(
            request.topics,
            lambda t: t.name,
            lambda t: _topic_error(types, t.name, ErrorCode.invalid_request, OPERATIONS_OMITTED),
        )
        return respond(types.DescribeTopicPartitionsResponse, topics=rejected)
    budget = min(request.response_partition_limit, MAX_PARTITIONS_PER_RESPONSE)
    topics = Encoded()  # each topic encoded as described, the loop given back between
    pacer = Pacer()
    next_cursor = None
    for name in names:
        await pacer.breathe()
        if budget <= 0:
            next_cursor = make(types.Cursor, topic_name=name, partition_index=0)
            break
        topic = ctx.state.topics.find(name)
        if topic is None:
            if not describe_all:
                topics.add(_topic_error(types, name, missing_topic_error(name), _TOPIC_OPERATIONS))
            continue
        first = cursor.partition_index if cursor is not None and name == cursor_topic else 0
        end = min(len(topic.partitions), first + budget)
        topics.add(
            describe_topic(
                types, topic, ctx.state.cluster.stopped, _TOPIC_OPERATIONS, range(first, end)
            )
        )
        if end < len(topic.partitions):
            next_cursor = make(types.Cursor, topic_name=name, partition_index=end)
            break
        budget -= max(end - first, 0)
    return respond(
        types.DescribeTopicPartitionsResponse, topics=topics.items(), next_cursor=next_cursor
    )


def _topic_error(types: Any, name: str, error: ErrorCode, operations: int) -> Any:
    return respond(
        types.DescribeTopicPartitionsResponseTopic,
        error,
        name=name,
        topic_id=None,
        is_internal=is_internal_name(name),
        partitions=(),
        topic_authorized_operations=operations,
    )
