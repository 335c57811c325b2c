"""Transactions on the wire: InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn,
TxnOffsetCommit, EndTxn and WriteTxnMarkers (the admin views are in
`transaction_admin`).

Version ranges are Kafka 4.1's. Old versions get Kafka's down-conversions:
PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH for clients that predate it
(InitProducerId < 4, the other coordinator APIs < 2).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.protocol.replies import EncodedItems
from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.handlers.groups import coordinator_of, is_coordinator, namespace_of
from kafkatest.emulator.server.pacing import Pacer
from kafkatest.emulator.server.repeats import Encoded, answer_topics, each_partition
from kafkatest.emulator.server.responses import error_code_of, make, respond, response_types
from kafkatest.emulator.state.errors import StateError
from kafkatest.emulator.state.groups.consumer.checks import CommitCheck
from kafkatest.emulator.state.groups.offsets import CommittedOffset
from kafkatest.emulator.state.transaction_model import TopicPartition

log = logging.getLogger("kafkatest.emulator")


def _fenced_for(ctx: RequestContext, code: ErrorCode, first_version: int) -> ErrorCode:
    """PRODUCER_FENCED as a client of this version understands it."""
    if code is ErrorCode.producer_fenced and ctx.api_version < first_version:
        return ErrorCode.invalid_producer_epoch
    return code


# -- InitProducerId -------------------------------------------------------------------


@handles(22, 0, 5)
async def init_producer_id(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    producer_id = getattr(request, "producer_id", -1)
    epoch = getattr(request, "producer_epoch", -1)
    try:
        if request.transactional_id is None:
            producer_id, epoch = ctx.state.producers.init_producer(producer_id, epoch)
        else:
            timeout_ms = int(request.transaction_timeout.total_seconds() * 1000)
            producer_id, epoch = ctx.state.transactions.init_producer(
                request.transactional_id, timeout_ms, producer_id, epoch
            )
    except StateError as exc:
        log.info("InitProducerId %r: %s", request.transactional_id, exc)
        return respond(
            types.InitProducerIdResponse,
            _fenced_for(ctx, error_code_of(exc), 4),
            producer_id=-1,
            producer_epoch=-1,
        )
    return respond(types.InitProducerIdResponse, producer_id=producer_id, producer_epoch=epoch)


# -- AddPartitionsToTxn ------------------------------------------------------------------


@handles(24, 0, 5)
async def add_partitions_to_txn(ctx: RequestContext, request: Any) -> Any:
    """v0-3 come from clients (one transaction); v4+ is the batched form brokers send
    on a producer's behalf, with VerifyOnly for KIP-890 part 1."""
    types = response_types(ctx)
    if ctx.api_version <= 3:
        results = _add_partitions(
            ctx,
            request.v3_and_below_transactional_id,
            request.v3_and_below_producer_id,
            request.v3_and_below_producer_epoch,
            request.v3_and_below_topics,
            verify_only=False,
        )
        return respond(
            types.AddPartitionsToTxnResponse,
            results_by_topic_v3_and_below=await _topic_results(types, results, Pacer()),
        )
    answers: list[Any] = []
    pacer = Pacer()  # each transaction's partitions are added, the loop given back between
    for txn in request.transactions:
        added = _add_partitions(
            ctx,
            txn.transactional_id,
            txn.producer_id,
            txn.producer_epoch,
            txn.topics,
            txn.verify_only,
        )
        answers.append(
            make(
                types.AddPartitionsToTxnResult,
                transactional_id=txn.transactional_id,
                topic_results=await _topic_results(types, added, pacer),
            )
        )
        await pacer.breathe()
    return respond(types.AddPartitionsToTxnResponse, results_by_transaction=tuple(answers))


def _add_partitions(
    ctx: RequestContext,
    transactional_id: str,
    producer_id: int,
    epoch: int,
    topics: Iterable[Any],
    verify_only: bool,
) -> dict[TopicPartition, ErrorCode]:
    """One error per requested partition: unknown ones fail alone and the rest
    are not attempted; otherwise all share the coordinator's answer."""
    wanted = [(t.name, p) for t in topics for p in t.partitions]
    unknown = {tp for tp in wanted if not ctx.state.topics.has_partition(*tp)}
    if unknown:
        return {
            tp: ErrorCode.unknown_topic_or_partition
            if tp in unknown
            else ErrorCode.operation_not_attempted
            for tp in wanted
        }
    coordinator = ctx.state.transactions
    if verify_only:
        out: dict[TopicPartition, ErrorCode] = {}
        for tp in wanted:
            try:
                coordinator.verify(transactional_id, producer_id, epoch, tp)
                out[tp] = ErrorCode.none
            except StateError as exc:
                out[tp] = error_code_of(exc)
        return out
    try:
        coordinator.add_partitions(transactional_id, producer_id, epoch, wanted)
        code = ErrorCode.none
    except StateError as exc:
        log.info("AddPartitionsToTxn %r: %s", transactional_id, exc)
        code = _fenced_for(ctx, error_code_of(exc), 2)
    return dict.fromkeys(wanted, code)


async def _topic_results(
    types: Any, results: dict[TopicPartition, ErrorCode], pacer: Pacer
) -> EncodedItems:
    """Each partition's error, by topic, encoded as it is made (`Encoded`)."""
    by_topic: dict[str, list[tuple[int, ErrorCode]]] = {}
    for (topic, partition), code in results.items():
        by_topic.setdefault(topic, []).append((partition, code))
    return await each_partition(
        by_topic.items(),
        lambda entry: entry[1],
        lambda _, result: make(
            types.AddPartitionsToTxnPartitionResult,
            partition_index=result[0],
            partition_error_code=result[1],
        ),
        lambda entry, answers: make(
            types.AddPartitionsToTxnTopicResult, name=entry[0], results_by_partition=answers
        ),
        pacer,
    )


# -- AddOffsetsToTxn, TxnOffsetCommit ------------------------------------------------------


@handles(25, 0, 4)
async def add_offsets_to_txn(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    try:
        ctx.state.transactions.add_offsets(
            request.transactional_id, request.producer_id, request.producer_epoch, request.group_id
        )
        code = ErrorCode.none
    except StateError as exc:
        log.info("AddOffsetsToTxn %r: %s", request.transactional_id, exc)
        code = _fenced_for(ctx, error_code_of(exc), 2)
    return respond(types.AddOffsetsToTxnResponse, code)


@handles(28, 0, 5)
async def txn_offset_commit(ctx: RequestContext, request: Any) -> Any:
    """Sent to the group coordinator; the offsets stay pending until EndTxn."""
    types = response_types(ctx)
    wanted = [(t.name, p) for t in request.topics for p in t.partitions]
    errors: dict[TopicPartition, ErrorCode] = {}
    if not is_coordinator(ctx, request.group_id):
        errors = {(name, p.partition_index): ErrorCode.not_coordinator for name, p in wanted}
    else:
        errors = _commit_pending(ctx, request, wanted)
    topics = await answer_topics(
        request.topics,
        lambda t: t.name,
        lambda t: t.partitions,
        lambda p: p.partition_index,
        lambda name, p: respond(
            types.TxnOffsetCommitResponsePartition,
            errors[(name, p.partition_index)],
            partition_index=p.partition_index,
        ),
        lambda name, partitions: make(
            types.TxnOffsetCommitResponseTopic, name=name, partitions=partitions
        ),
    )
    return respond(types.TxnOffsetCommitResponse, topics=topics)


def _commit_pending(
    ctx: RequestContext, request: Any, wanted: list[tuple[str, Any]]
) -> dict[TopicPartition, ErrorCode]:
    keys = [(name, p.partition_index) for name, p in wanted]
    generation = getattr(request, "generation_id", -1)
    member_id = getattr(request, "member_id", "")
    instance_id = getattr(request, "group_instance_id", None)
    namespace = namespace_of(ctx.state)
    check = CommitCheck()
    if namespace.is_consumer_group(request.group_id):
        check = namespace.commit_error(
            request.group_id, member_id, generation, ctx.api_version, True, instance_id
        )
        error = check.error
    else:
        error = coordinator_of(ctx.state).check_committer(
            request.group_id, generation, member_id, instance_id
        )
    if error is not None:
        return dict.fromkeys(keys, error)
    out: dict[TopicPartition, ErrorCode] = {}
    offsets: dict[TopicPartition, CommittedOffset] = {}
    for name, p in wanted:
        key = (name, p.partition_index)
        if not ctx.state.topics.has_partition(*key):
            out[key] = ErrorCode.unknown_topic_or_partition
            continue
        topic = ctx.state.topics.find(name)
        stale = check.partition_error(topic.topic_id if topic else None, p.partition_index)
        if stale is not None:  # an older epoch, and not this partition's (Kafka 4.3)
            out[key] = stale
            continue
        offsets[key] = CommittedOffset(
            offset=p.committed_offset,
            leader_epoch=getattr(p, "committed_leader_epoch", -1),
            metadata=p.committed_metadata or "",
            commit_timestamp_ms=-1,
        )
    if offsets:
        try:
            ctx.state.transactions.commit_offsets(
                request.transactional_id,
                request.producer_id,
                request.producer_epoch,
                request.group_id,
                offsets,
                add_partition=ctx.api_version >= 5,
            )
            code = ErrorCode.none
        except StateError as exc:
            log.info("TxnOffsetCommit %r: %s", request.transactional_id, exc)
            code = error_code_of(exc)
            if code is ErrorCode.producer_fenced:
                code = ErrorCode.invalid_producer_epoch
        out.update(dict.fromkeys(offsets, code))
    return out


# -- EndTxn ------------------------------------------------------------------------------


@handles(26, 0, 5)
async def end_txn(ctx: RequestContext, request: Any) -> Any:
    """v5 is TV2: every EndTxn bumps the epoch and answers the new one."""
    types = response_types(ctx)
    try:
        producer_id, epoch = ctx.state.transactions.end_transaction(
            request.transactional_id,
            request.producer_id,
            request.producer_epoch,
            request.committed,
            tv2=ctx.api_version >= 5,
        )
        code = ErrorCode.none
    except StateError as exc:
        log.info("EndTxn %r: %s", request.transactional_id, exc)
        code = _fenced_for(ctx, error_code_of(exc), 2)
        producer_id, epoch = -1, -1
    return respond(types.EndTxnResponse, code, producer_id=producer_id, producer_epoch=epoch)


# -- WriteTxnMarkers ------------------------------------------------------------------------


@handles(27, 1, 2)
async def write_txn_markers(ctx: RequestContext, request: Any) -> Any:
    """What a coordinator sends partition leaders; clients send it to abort a hanging
    transaction (``kafka-transactions abort``, Admin.abortTransaction)."""
    types = response_types(ctx)
    results = Encoded()
    pacer = Pacer()  # a marker is written per naming, the loop given back between them
    for marker in request.markers:
        topics = await each_partition(
            marker.topics,
            lambda topic: topic.partition_indexes,
            functools.partial(_marker_result, ctx, types, marker),
            lambda topic, partitions: make(
                types.WritableTxnMarkerTopicResult, name=topic.name, partitions=partitions
            ),
            pacer,
        )
        results.add(
            make(types.WritableTxnMarkerResult, producer_id=marker.producer_id, topics=topics)
        )
    return make(types.WriteTxnMarkersResponse, markers=results.items())


def _marker_result(ctx: RequestContext, types: Any, marker: Any, topic: Any, index: int) -> Any:
    code = _write_marker(ctx, marker, topic.name, index)
    return respond(types.WritableTxnMarkerPartitionResult, code, partition_index=index)


def _write_marker(ctx: RequestContext, marker: Any, topic_name: str, index: int) -> ErrorCode:
    """Kafka's leader checks (``ProducerAppendInfo.appendEndTxnMarker``): an older
    producer epoch or coordinator epoch than the partition has seen is refused."""
    try:
        partition = ctx.state.topics.get(topic_name).partition(index)
    except StateError as exc:
        return error_code_of(exc)
    if partition.leader_id != ctx.broker_id:
        return ErrorCode.not_leader_or_follower
    known = ctx.state.producers.entry(marker.producer_id, (topic_name, index))
    if known is not None:
        if marker.producer_epoch < known.epoch:
            return ErrorCode.invalid_producer_epoch
        if marker.coordinator_epoch < known.coordinator_epoch:
            return ErrorCode.transaction_coordinator_fenced
    ctx.state.write_marker(
        topic_name,
        index,
        marker.producer_id,
        marker.producer_epoch,
        marker.transaction_result,
        marker.coordinator_epoch,
    )
    return ErrorCode.none
