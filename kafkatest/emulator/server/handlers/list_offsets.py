"""ListOffsets: earliest, latest, max timestamp, and first offset at a timestamp.

A timestamp with no record at or after it answers offset -1 / timestamp -1 and
no error, which Spark reads as "no match". Versions 8-10 add the tiered-storage
specs; without tiered storage Kafka answers -4 (earliest local) like -2 and -5
(latest tiered) with "no offset", which is what the emulator does too.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.responses import NO_THROTTLE, error_code_of, make, response_types
from kafkatest.emulator.state.broker_state import LEADER_EPOCH
from kafkatest.emulator.state.errors import StateError
from kafkatest.emulator.state.log import PartitionLog

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL = -4


@handles(2, 1, 10)
async def list_offsets(ctx: RequestContext, request: Any) -> Any:
    ctx.state.maybe_enforce_retention()
    types = response_types(ctx)
    topics = []
    for topic_request in request.topics:
        partitions = tuple(
            _list_partition(ctx, types, topic_request.name, p) for p in topic_request.partitions
        )
        topics.append(
            make(types.ListOffsetsTopicResponse, name=topic_request.name, partitions=partitions)
        )
    return make(types.ListOffsetsResponse, throttle_time=NO_THROTTLE, topics=tuple(topics))


def _list_partition(ctx: RequestContext, types: Any, topic_name: str, request: Any) -> Any:
    def answer(code: ErrorCode, offset: int = -1, timestamp: int = -1) -> Any:
        return make(
            types.ListOffsetsPartitionResponse,
            partition_index=request.partition_index,
            error_code=code,
            timestamp=timestamp,
            offset=offset,
            leader_epoch=LEADER_EPOCH if code is ErrorCode.none and offset >= 0 else -1,
        )

    try:
        partition = ctx.state.topics.get(topic_name).partition(request.partition_index)
    except StateError as exc:
        return answer(error_code_of(exc))
    if partition.leader_id != ctx.broker_id:
        return answer(ErrorCode.not_leader_or_follower)
    current_epoch = getattr(request, "current_leader_epoch", -1)
    if current_epoch > LEADER_EPOCH:
        return answer(ErrorCode.unknown_leader_epoch)
    found = _lookup(partition.log, request.timestamp)
    if found is None:
        return answer(ErrorCode.none)
    offset, timestamp = found
    return answer(ErrorCode.none, offset, timestamp)


def _lookup(log: PartitionLog, timestamp: int) -> tuple[int, int] | None:
    if timestamp == LATEST:
        return log.high_watermark, -1
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return log.log_start_offset, -1
    if timestamp == MAX_TIMESTAMP:
        return log.max_timestamp()
    if timestamp < 0:
        return None
    return log.offset_for_timestamp(timestamp)
