"""OffsetForLeaderEpoch: every partition has had one epoch, ending at the log end.

Java consumers validate their positions with this after metadata changes; the
answer (epoch 0, log end) tells them no truncation happened.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.responses import NO_THROTTLE, error_code_of, make, response_types
from kafkatest.emulator.state.broker_state import LEADER_EPOCH
from kafkatest.emulator.state.errors import StateError


@handles(23, 2, 4)
async def offset_for_leader_epoch(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    topics = []
    for topic_request in request.topics:
        partitions = tuple(
            _answer(ctx, types, topic_request.topic, p) for p in topic_request.partitions
        )
        topics.append(
            make(types.OffsetForLeaderTopicResult, topic=topic_request.topic, partitions=partitions)
        )
    return make(types.OffsetForLeaderEpochResponse, throttle_time=NO_THROTTLE, topics=tuple(topics))


def _answer(ctx: RequestContext, types: Any, topic_name: str, request: Any) -> Any:
    def answer(code: ErrorCode, epoch: int = -1, end_offset: int = -1) -> Any:
        return make(
            types.EpochEndOffset,
            error_code=code,
            partition=request.partition,
            leader_epoch=epoch,
            end_offset=end_offset,
        )

    try:
        partition = ctx.state.topics.get(topic_name).partition(request.partition)
    except StateError as exc:
        return answer(error_code_of(exc))
    if partition.leader_id != ctx.broker_id:
        return answer(ErrorCode.not_leader_or_follower)
    if request.current_leader_epoch > LEADER_EPOCH:
        return answer(ErrorCode.unknown_leader_epoch)
    if request.leader_epoch > LEADER_EPOCH:
        return answer(ErrorCode.none)
    return answer(ErrorCode.none, LEADER_EPOCH, partition.log.log_end_offset)
