"""Fetch: whole stored batches, byte limits, long polling and fetch sessions.

Batches are returned as stored (the first may start before the fetch offset;
clients skip those records). Byte limits are soft in Kafka's way: the first
batch of the first non-empty partition is always included so consumers
progress. From v13 topics are named by id (an unknown id is UNKNOWN_TOPIC_ID).

Fetch sessions (KIP-227) are served as Kafka serves them: a request at epoch 0
opens one (a full response, with the new session id), later requests at the
session's next epoch carry only changed partitions and forgotten ones and get
only partitions with news; epoch -1 fetches without a session. The session
logic lives in `state.fetch_sessions`; this module reads and answers.

The all-zero topic id names no topic, and Kafka fails some requests naming it with
a top-level UNKNOWN_SERVER_ERROR, echoing the request's session id, instead of
answering UNKNOWN_TOPIC_ID for the partition: its response builder compares the
next partition's topic name with that partition's, which has none (see
`_kafka_fails`). A session keeps such a partition by its id like any other (Kafka
4.3; 4.1 failed there too). Clients never send the zero id; the emulator answers as
Kafka does rather than fail in its own way.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.protocol.replies import StoredRecords
from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.handlers.leader_epochs import fencing_error
from kafkatest.emulator.server.responses import error_code_of, make, respond, response_types
from kafkatest.emulator.state.errors import StateError
from kafkatest.emulator.state.fetch_sessions import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    NO_SESSION,
    FetchSession,
    ForgottenKey,
    PartitionKey,
    SessionPartition,
)
from kafkatest.emulator.state.notify import wait_any

_READ_COMMITTED = 1
#: The first Fetch version that names topics by id.
TOPIC_ID_VERSION = 13


@dataclass(slots=True)
class _PartitionRead:
    wanted: SessionPartition
    error: ErrorCode
    high_watermark: int = -1
    log_start_offset: int = -1
    batches: tuple[bytes, ...] = ()
    last_stable_offset: int = -1
    #: read_committed only: (producer id, first offset) of aborted transactions.
    aborted: tuple[tuple[int, int], ...] = ()


@handles(1, 4, 18)
async def fetch(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    uses_ids = ctx.api_version >= TOPIC_ID_VERSION
    session_id = getattr(request, "session_id", NO_SESSION)
    epoch = getattr(request, "session_epoch", FINAL_EPOCH)
    sessions = ctx.fetch_sessions
    session: FetchSession | None = None
    if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
        if session_id != NO_SESSION:
            sessions.remove(session_id)
        wanted = _requested(ctx, request, uses_ids)
    else:
        session = sessions.get(session_id)
        error = _session_error(session, epoch, uses_ids)
        if error is not None:
            return _error_response(types, error)
        assert session is not None
        session.update(_requested(ctx, request, uses_ids), _forgotten(request, uses_ids))
        if session.partitions:
            session.advance()
            wanted = list(session.partitions.values())
        else:
            # Kafka closes a session the request emptied and answers without one.
            sessions.remove(session_id)
            session = None
            wanted = _requested(ctx, request, uses_ids)
    committed = getattr(request, "isolation_level", 0) == _READ_COMMITTED
    reads = await _read_until_ready(ctx, request, wanted, committed)
    if _kafka_fails(reads):  # an incremental one has changed its session and epoch by then
        return _error_response(types, ErrorCode.unknown_server_error, session_id)
    if session is not None:
        reads = _incremental(session, reads, uses_ids)
    elif epoch == INITIAL_EPOCH:
        session = sessions.create(uses_ids, _session_partitions(reads, uses_ids))
    return _response(types, reads, committed, NO_SESSION if session is None else session.session_id)


def _session_error(session: FetchSession | None, epoch: int, uses_ids: bool) -> ErrorCode | None:
    if session is None:
        return ErrorCode.fetch_session_id_not_found
    if session.epoch != epoch:
        return ErrorCode.invalid_fetch_session_epoch
    if session.uses_topic_ids != uses_ids:
        return ErrorCode.fetch_session_topic_id_error
    return None


def _error_response(types: Any, error: ErrorCode, session_id: int = NO_SESSION) -> Any:
    """A top-level error without partitions: a session error names no session; a
    failed request echoes the request's (Kafka's FetchRequest.getErrorResponse)."""
    return respond(
        types.FetchResponse, error, session_id=session_id, responses=(), node_endpoints=()
    )


def _kafka_fails(reads: list[_PartitionRead]) -> bool:
    """Whether Kafka fails this fetch with UNKNOWN_SERVER_ERROR.

    A partition of the zero topic id has neither id nor name, and Kafka throws when
    building the response compares the next partition with it: the response lists the
    partitions read, then those of unresolved ids, then those of unknown topics or
    partitions (each in request order), so it fails unless that one is last. In an
    incremental fetch the partitions with errors are the ones always sent, and they
    are the ones that can follow it, so the same rule holds there.
    """
    if not any(_unnamed(read) for read in reads):
        return False
    tail = [r for r in reads if r.wanted.topic is None] + [
        r
        for r in reads
        if r.wanted.topic is not None and r.error is ErrorCode.unknown_topic_or_partition
    ]
    return any(_unnamed(read) for read in tail[:-1])


def _unnamed(read: _PartitionRead) -> bool:
    return read.wanted.topic is None and read.wanted.topic_id is None


def _requested(ctx: RequestContext, request: Any, uses_ids: bool) -> list[SessionPartition]:
    """The request's partitions in order, each with its topic's name and id resolved.

    A partition named twice is fetched once, at its first place with its last
    parameters, as Kafka's map of requested partitions keeps it."""
    out: dict[tuple[Any, int], SessionPartition] = {}
    topics = ctx.state.topics
    for topic_request in request.topics:
        if uses_ids:
            topic_id = topic_request.topic_id
            found = topics.find_by_id(topic_id)
            name = None if found is None else found.name
        else:
            name = topic_request.topic
            topic_id = None
        for p in topic_request.partitions:
            out[(topic_id if uses_ids else name, p.partition)] = SessionPartition(
                topic=name,
                topic_id=topic_id,
                partition=p.partition,
                fetch_offset=p.fetch_offset,
                max_bytes=p.partition_max_bytes,
                current_leader_epoch=getattr(p, "current_leader_epoch", -1),
            )
    return list(out.values())


def _forgotten(request: Any, uses_ids: bool) -> list[ForgottenKey]:
    return [
        (t.topic_id if uses_ids else t.topic, p)
        for t in getattr(request, "forgotten_topics_data", ())
        for p in t.partitions
    ]


async def _read_until_ready(
    ctx: RequestContext, request: Any, wanted: list[SessionPartition], committed: bool
) -> list[_PartitionRead]:
    """Read until min_bytes are there, a partition fails, max_wait passes, or the client
    has sent its next request on this connection (see `server/inbox.py`). A fetch with
    no partition is answered at once, as Kafka does: a consumer closing its fetch
    session sends one and waits for the answer."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + request.max_wait.total_seconds()
    inbox = ctx.inbox
    signals = (ctx.state.appends,) if inbox is None else (ctx.state.appends, inbox.arrivals)
    while True:
        ctx.state.maybe_enforce_retention()
        reads, total, failed = _read_all(ctx, request.max_bytes, wanted, committed)
        remaining = deadline - loop.time()
        if total >= request.min_bytes or failed or not wanted or remaining <= 0:
            return reads
        if inbox is not None and inbox.waiting():
            return reads
        await wait_any(signals, remaining)


def _read_all(
    ctx: RequestContext, max_bytes: int, wanted: list[SessionPartition], committed: bool
) -> tuple[list[_PartitionRead], int, bool]:
    total = 0
    failed = False
    reads: list[_PartitionRead] = []
    for part in wanted:
        read = _read_partition(ctx, part, max_bytes - total, total == 0, committed)
        reads.append(read)
        if read.error is not ErrorCode.none:
            failed = True
        total += sum(len(b) for b in read.batches)
    return reads, total, failed


def _read_partition(
    ctx: RequestContext, wanted: SessionPartition, budget: int, first: bool, committed: bool
) -> _PartitionRead:
    if wanted.topic is None:  # an id no topic has (only from v13)
        return _PartitionRead(wanted, ErrorCode.unknown_topic_id)
    try:
        topic = ctx.state.topics.get(wanted.topic)
        if wanted.topic_id is not None and topic.topic_id != wanted.topic_id:
            return _PartitionRead(wanted, ErrorCode.unknown_topic_id)
        partition = topic.partition(wanted.partition)
    except StateError as exc:
        return _PartitionRead(wanted, error_code_of(exc))
    if partition.leader_id != ctx.broker_id:
        return _PartitionRead(wanted, ErrorCode.not_leader_or_follower)
    fenced = fencing_error(partition, wanted.current_leader_epoch)
    if fenced is not None:
        return _PartitionRead(wanted, fenced)
    log = partition.log
    max_bytes = min(wanted.max_bytes, max(budget, 0))
    stable = log.last_stable_offset
    aborted: tuple[tuple[int, int], ...] = ()
    try:
        if committed:
            batches, upper = log.read_bounded(wanted.fetch_offset, max_bytes, first, stable)
            if batches:
                aborted = tuple(
                    (a.producer_id, a.first_offset)
                    for a in log.aborted_transactions(wanted.fetch_offset, upper)
                )
        else:
            batches = log.read(wanted.fetch_offset, max_bytes, first)
    except StateError as exc:
        return _PartitionRead(
            wanted, error_code_of(exc), log.high_watermark, log.log_start_offset, (), stable
        )
    return _PartitionRead(
        wanted,
        ErrorCode.none,
        log.high_watermark,
        log.log_start_offset,
        tuple(batches),
        stable,
        aborted,
    )


def _session_partitions(
    reads: list[_PartitionRead], uses_ids: bool
) -> dict[PartitionKey, SessionPartition]:
    """A new session's partitions, remembering what the full response told."""
    out: dict[PartitionKey, SessionPartition] = {}
    for read in reads:
        part = read.wanted
        part.high_watermark = read.high_watermark
        part.log_start_offset = read.log_start_offset
        out[part.key(uses_ids)] = part
    return out


def _incremental(
    session: FetchSession, reads: list[_PartitionRead], uses_ids: bool
) -> list[_PartitionRead]:
    """The reads an incremental response carries; those sent move to the session's end."""
    sent: list[_PartitionRead] = []
    for read in reads:
        part = read.wanted
        if part.must_send(
            read.error is not ErrorCode.none,
            bool(read.batches),
            read.high_watermark,
            read.log_start_offset,
        ):
            sent.append(read)
            session.move_to_end(part.key(uses_ids))
    return sent


def _response(types: Any, reads: list[_PartitionRead], committed: bool, session_id: int) -> Any:
    responses = []
    # Consecutive partitions of one topic share a topic entry, as in Kafka's responses.
    groups: list[tuple[SessionPartition, list[Any]]] = []
    for read in reads:
        partition = respond(
            types.PartitionData,
            read.error,
            partition_index=read.wanted.partition,
            high_watermark=read.high_watermark,
            last_stable_offset=read.last_stable_offset,
            log_start_offset=read.log_start_offset,
            aborted_transactions=tuple(
                make(types.AbortedTransaction, producer_id=pid, first_offset=first)
                for pid, first in read.aborted
            )
            if committed
            else None,
            preferred_read_replica=-1,
            records=StoredRecords(read.batches),
        )
        last = groups[-1][0] if groups else None
        if last is not None and (last.topic, last.topic_id) == (
            read.wanted.topic,
            read.wanted.topic_id,
        ):
            groups[-1][1].append(partition)
        else:
            groups.append((read.wanted, [partition]))
    for wanted, partitions in groups:
        responses.append(
            make(
                types.FetchableTopicResponse,
                topic=wanted.topic,
                topic_id=wanted.topic_id,
                partitions=tuple(partitions),
            )
        )
    return respond(
        types.FetchResponse, session_id=session_id, responses=tuple(responses), node_endpoints=()
    )
