"""Fetch: whole stored batches, byte limits, long polling, sessions declined.

Batches are returned as stored (the first may start before the fetch offset;
clients skip those records). Byte limits are soft in Kafka's way: the first
batch of the first non-empty partition is always included so consumers
progress. Fetch sessions (KIP-227) are declined by answering session_id 0, so
every response is a full one holding exactly the requested partitions.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.handlers.leader_epochs import fencing_error
from kafkatest.emulator.server.responses import NO_THROTTLE, error_code_of, make, response_types
from kafkatest.emulator.state.errors import StateError

_READ_COMMITTED = 1


@dataclass(slots=True)
class _PartitionRead:
    partition: int
    error: ErrorCode
    high_watermark: int = -1
    log_start_offset: int = -1
    batches: tuple[bytes, ...] = ()
    last_stable_offset: int = -1
    #: read_committed only: (producer id, first offset) of aborted transactions.
    aborted: tuple[tuple[int, int], ...] = ()


@handles(1, 4, 12)
async def fetch(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    session_id = getattr(request, "session_id", 0)
    session_epoch = getattr(request, "session_epoch", -1)
    if session_id != 0 or session_epoch > 0:
        code = (
            ErrorCode.fetch_session_id_not_found
            if session_id != 0
            else ErrorCode.invalid_fetch_session_epoch
        )
        return make(
            types.FetchResponse,
            throttle_time=NO_THROTTLE,
            error_code=code,
            session_id=0,
            responses=(),
        )
    loop = asyncio.get_running_loop()
    deadline = loop.time() + request.max_wait.total_seconds()
    committed = getattr(request, "isolation_level", 0) == _READ_COMMITTED
    while True:
        ctx.state.maybe_enforce_retention()
        reads, total, failed = _read_all(ctx, request, committed)
        remaining = deadline - loop.time()
        if total >= request.min_bytes or failed or remaining <= 0:
            break
        await ctx.state.appends.wait(remaining)
    return _response(types, request, reads, committed)


def _read_all(
    ctx: RequestContext, request: Any, committed: bool
) -> tuple[list[list[_PartitionRead]], int, bool]:
    budget = request.max_bytes
    total = 0
    failed = False
    out: list[list[_PartitionRead]] = []
    for topic_request in request.topics:
        reads = []
        for partition_request in topic_request.partitions:
            read = _read_partition(
                ctx, topic_request.topic, partition_request, budget - total, total == 0, committed
            )
            reads.append(read)
            if read.error is not ErrorCode.none:
                failed = True
            total += sum(len(b) for b in read.batches)
        out.append(reads)
    return out, total, failed


def _read_partition(
    ctx: RequestContext, topic_name: str, request: Any, budget: int, first: bool, committed: bool
) -> _PartitionRead:
    index = request.partition
    try:
        topic = ctx.state.topics.get(topic_name)
        partition = topic.partition(index)
    except StateError as exc:
        return _PartitionRead(index, error_code_of(exc))
    if partition.leader_id != ctx.broker_id:
        return _PartitionRead(index, ErrorCode.not_leader_or_follower)
    fenced = fencing_error(partition, getattr(request, "current_leader_epoch", -1))
    if fenced is not None:
        return _PartitionRead(index, fenced)
    log = partition.log
    max_bytes = min(request.partition_max_bytes, max(budget, 0))
    stable = log.last_stable_offset
    aborted: tuple[tuple[int, int], ...] = ()
    try:
        if committed:
            batches, upper = log.read_bounded(request.fetch_offset, max_bytes, first, stable)
            if batches:
                aborted = tuple(
                    (a.producer_id, a.first_offset)
                    for a in log.aborted_transactions(request.fetch_offset, upper)
                )
        else:
            batches = log.read(request.fetch_offset, max_bytes, first)
    except StateError as exc:
        return _PartitionRead(
            index, error_code_of(exc), log.high_watermark, log.log_start_offset, (), stable
        )
    return _PartitionRead(
        index,
        ErrorCode.none,
        log.high_watermark,
        log.log_start_offset,
        tuple(batches),
        stable,
        aborted,
    )


def _response(types: Any, request: Any, reads: list[list[_PartitionRead]], committed: bool) -> Any:
    responses = []
    for topic_request, topic_reads in zip(request.topics, reads, strict=True):
        partitions = tuple(
            make(
                types.PartitionData,
                partition_index=read.partition,
                error_code=read.error,
                high_watermark=read.high_watermark,
                last_stable_offset=read.last_stable_offset,
                log_start_offset=read.log_start_offset,
                aborted_transactions=(
                    tuple(
                        make(types.AbortedTransaction, producer_id=pid, first_offset=first)
                        for pid, first in read.aborted
                    )
                    if committed
                    else None
                ),
                preferred_read_replica=-1,
                records=b"".join(read.batches),
            )
            for read in topic_reads
        )
        responses.append(
            make(types.FetchableTopicResponse, topic=topic_request.topic, partitions=partitions)
        )
    return make(
        types.FetchResponse,
        throttle_time=NO_THROTTLE,
        error_code=ErrorCode.none,
        session_id=0,
        responses=tuple(responses),
    )
