"""OffsetForLeaderEpoch, and the leader-epoch fencing every partition read shares.

Java consumers validate their position with OffsetForLeaderEpoch after a partition's
leader epoch changes: the new leader answers where the epoch they last read from
ended (the current epoch ends at the log end), from the log's epoch history. A
request naming an older epoch than the leader's is fenced (the client's metadata
is stale), a newer one is unknown (the broker's is), as Kafka answers.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.repeats import answer_topics
from kafkatest.emulator.server.responses import error_code_of, make, respond, response_types
from kafkatest.emulator.state.errors import StateError
from kafkatest.emulator.state.leader_epochs import UNDEFINED_EPOCH, UNDEFINED_OFFSET
from kafkatest.emulator.state.topics import Partition


def fencing_error(partition: Partition, current_leader_epoch: int) -> ErrorCode | None:
    """FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH for a request's current_leader_epoch
    (-1: the client does not say, and is never fenced)."""
    if current_leader_epoch == UNDEFINED_EPOCH:
        return None
    if current_leader_epoch < partition.leader_epoch:
        return ErrorCode.fenced_leader_epoch
    if current_leader_epoch > partition.leader_epoch:
        return ErrorCode.unknown_leader_epoch
    return None


@handles(23, 2, 4)
async def offset_for_leader_epoch(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    # Each naming is answered, as Kafka answers it; one named again is looked up once.
    topics = await answer_topics(
        request.topics,
        lambda t: t.topic,
        lambda t: t.partitions,
        lambda p: p,
        lambda name, p: _answer(ctx, types, name, p),
        lambda name, partitions: make(
            types.OffsetForLeaderTopicResult, topic=name, partitions=partitions
        ),
    )
    return respond(types.OffsetForLeaderEpochResponse, topics=topics)


def _answer(ctx: RequestContext, types: Any, topic_name: str, request: Any) -> Any:
    def answer(code: ErrorCode, epoch: int = UNDEFINED_EPOCH, end: int = UNDEFINED_OFFSET) -> Any:
        return respond(
            types.EpochEndOffset,
            code,
            partition=request.partition,
            leader_epoch=epoch,
            end_offset=end,
        )

    try:
        partition = ctx.state.topics.get(topic_name).partition(request.partition)
    except StateError as exc:
        return answer(error_code_of(exc))
    if partition.leader_id != ctx.broker_id:
        return answer(ErrorCode.not_leader_or_follower)
    fenced = fencing_error(partition, request.current_leader_epoch)
    if fenced is not None:
        return answer(fenced)
    log = partition.log
    epoch, end = log.epochs.end_offset_for(request.leader_epoch, log.log_end_offset)
    return answer(ErrorCode.none, epoch, end)
