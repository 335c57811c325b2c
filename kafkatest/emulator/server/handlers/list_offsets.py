"""ListOffsets: earliest, latest, max timestamp, and first offset at a timestamp.

A timestamp with no record at or after it answers offset -1 / timestamp -1 and
no error, which Spark reads as "no match". Versions 8-11 add the tiered-storage
specs; without tiered storage Kafka answers -4 (earliest local) like -2, and -5
(latest tiered) and -6 (earliest pending upload, v11) with "no offset", which is what
the emulator does too. A spec older than the version that added it, or a negative
timestamp that names no spec, is UNSUPPORTED_VERSION for its partition. With
isolation_level read_committed (v2+), latest is the last stable offset and
lookups answer only offsets below it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.handlers.leader_epochs import fencing_error
from kafkatest.emulator.server.pacing import Pacer
from kafkatest.emulator.server.repeats import Encoded
from kafkatest.emulator.server.responses import error_code_of, make, respond, response_types
from kafkatest.emulator.state.errors import StateError
from kafkatest.emulator.state.log import PartitionLog
from kafkatest.emulator.state.topics import Partition

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL = -4
READ_COMMITTED = 1
#: Each special timestamp and the first version that may send it (Kafka's
#: ReplicaManager.timestampMinSupportedVersion): -5 latest tiered, -6 earliest
#: pending upload (KIP-1023).
_SPEC_SINCE = {EARLIEST: 1, LATEST: 1, MAX_TIMESTAMP: 7, EARLIEST_LOCAL: 8, -5: 9, -6: 11}


@handles(2, 1, 11)
async def list_offsets(ctx: RequestContext, request: Any) -> Any:
    """Each partition named is answered once, as Kafka 4.1's `ReplicaManager.fetchOffset`
    answers (one status per partition, grouped by topic): a partition named more than
    once gets INVALID_REQUEST, and no lookup. The loop is given back between
    partitions (`Pacer`), and each lookup reads a few batches (`state.time_index`)."""
    ctx.state.maybe_enforce_retention()
    types = response_types(ctx)
    committed = getattr(request, "isolation_level", 0) == READ_COMMITTED
    named = Counter((t.name, p.partition_index) for t in request.topics for p in t.partitions)
    pacer = Pacer()
    #: Per topic: the partitions answered, and their answers encoded as they are made.
    by_topic: dict[str, tuple[set[int], Encoded]] = {}
    for topic_request in request.topics:
        name = topic_request.name
        answered, answers = by_topic.setdefault(name, (set(), Encoded()))
        for p in topic_request.partitions:
            index = p.partition_index
            if index in answered:
                continue
            answered.add(index)
            if named[(name, index)] > 1:
                answers.add(_answer(types, p, ErrorCode.invalid_request))
            else:
                answers.add(_list_partition(ctx, types, name, p, committed))
            await pacer.breathe()
    topics = Encoded()
    for name, (_answered, answers) in by_topic.items():
        topics.add(make(types.ListOffsetsTopicResponse, name=name, partitions=answers.items()))
        await pacer.breathe()
    return respond(types.ListOffsetsResponse, topics=topics.items())


def _answer(
    types: Any,
    request: Any,
    code: ErrorCode,
    offset: int = -1,
    timestamp: int = -1,
    epoch: int = -1,
) -> Any:
    return respond(
        types.ListOffsetsPartitionResponse,
        code,
        partition_index=request.partition_index,
        timestamp=timestamp,
        offset=offset,
        leader_epoch=epoch,
    )


def _list_partition(
    ctx: RequestContext, types: Any, topic_name: str, request: Any, committed: bool
) -> Any:
    def answer(code: ErrorCode, offset: int = -1, timestamp: int = -1, epoch: int = -1) -> Any:
        return _answer(types, request, code, offset, timestamp, epoch)

    if request.timestamp < 0 and ctx.api_version < _SPEC_SINCE.get(request.timestamp, 1 << 15):
        return answer(ErrorCode.unsupported_version)  # before the partition is looked up
    try:
        partition = ctx.state.topics.get(topic_name).partition(request.partition_index)
    except StateError as exc:
        return answer(error_code_of(exc))
    if partition.leader_id != ctx.broker_id:
        return answer(ErrorCode.not_leader_or_follower)
    fenced = fencing_error(partition, getattr(request, "current_leader_epoch", -1))
    if fenced is not None:
        return answer(fenced)
    found = _lookup(partition.log, request.timestamp, committed)
    if found is None:
        return answer(ErrorCode.none)
    offset, timestamp = found
    return answer(
        ErrorCode.none, offset, timestamp, _epoch_of(partition, request.timestamp, offset)
    )


def _epoch_of(partition: Partition, timestamp: int, offset: int) -> int:
    """The leader epoch Kafka names with an answer: the current one for the latest
    offset, the first known epoch for the log start, else the epoch `offset` was
    written in."""
    if timestamp == LATEST:
        return partition.leader_epoch
    epochs = partition.log.epochs
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        first = epochs.earliest
        return first.epoch if first is not None and first.start_offset <= offset else -1
    found = epochs.epoch_for_offset(offset)
    return -1 if found is None else found


def _lookup(log: PartitionLog, timestamp: int, committed: bool) -> tuple[int, int] | None:
    """Kafka's ``Partition.fetchOffsetForTimestamp``: read_committed sees up to the
    last stable offset, read_uncommitted up to the high watermark."""
    fetchable = log.last_stable_offset if committed else log.high_watermark
    if timestamp == LATEST:
        return fetchable, -1
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return log.log_start_offset, -1
    if timestamp == MAX_TIMESTAMP:
        found = log.max_timestamp()
    elif timestamp < 0:
        return None
    else:
        found = log.offset_for_timestamp(timestamp)
    if found is None or found[0] >= fetchable:
        return None
    return found
