"""The transaction admin views: DescribeTransactions, ListTransactions and
DescribeProducers (what ``kafka-transactions`` calls), at Kafka 4.1's versions."""

from __future__ import annotations

import datetime
from typing import Any

import re2
from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.repeats import Answers, answer_topics
from kafkatest.emulator.server.responses import (
    error_code_of,
    make,
    make_from,
    respond,
    response_types,
)
from kafkatest.emulator.state.errors import StateError
from kafkatest.emulator.state.groups.consumer.regex import compile_linear
from kafkatest.emulator.state.transaction_model import STATES


def _timeout(ms: int) -> datetime.timedelta:
    return datetime.timedelta(milliseconds=ms)


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def _timestamp(ms: int) -> datetime.datetime:
    """A non-nullable timestamp field; -1 (none) is written as -1 too."""
    return _EPOCH + datetime.timedelta(milliseconds=ms)


@handles(65, 0, 0)
async def describe_transactions(ctx: RequestContext, request: Any) -> Any:
    """Each id named is answered; one named many times is described once (`Answers`)."""
    types = response_types(ctx)
    answers: Answers[str] = Answers()
    states = await answers.each(
        request.transactional_ids, str, lambda txn_id: _describe_transaction(ctx, types, txn_id)
    )
    return respond(types.DescribeTransactionsResponse, transaction_states=states)


def _describe_transaction(ctx: RequestContext, types: Any, transactional_id: str) -> Any:
    try:
        meta = ctx.state.transactions.describe(transactional_id)
    except StateError as exc:
        return respond(
            types.TransactionState,
            error_code_of(exc),
            transactional_id=transactional_id,
            transaction_state="",
            transaction_timeout=_timeout(0),
            transaction_start_time=_timestamp(0),
            producer_id=0,
            producer_epoch=0,
            topics=(),
        )
    by_topic: dict[str, list[int]] = {}
    for topic, partition in sorted(meta.partitions):
        by_topic.setdefault(topic, []).append(partition)
    return respond(
        types.TransactionState,
        transactional_id=transactional_id,
        transaction_state=meta.state,
        transaction_timeout=_timeout(meta.timeout_ms),
        transaction_start_time=_timestamp(meta.start_ms),
        producer_id=meta.producer_id,
        producer_epoch=meta.epoch,
        topics=tuple(
            make(types.TopicData, topic=topic, partitions=tuple(partitions))
            for topic, partitions in by_topic.items()
        ),
    )


@handles(66, 0, 2)
async def list_transactions(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    known = set(STATES)
    unknown = tuple(s for s in request.state_filters if s not in known)
    pattern = getattr(request, "transactional_id_pattern", None)
    if pattern:
        try:
            compile_linear(pattern)
        except re2.error:
            return respond(
                types.ListTransactionsResponse,
                ErrorCode.invalid_regular_expression,
                unknown_state_filters=(),
                transaction_states=(),
            )
    found = ctx.state.transactions.list(
        [s for s in request.state_filters if s in known],
        request.producer_id_filters,
        getattr(request, "duration_filter", -1),
        pattern,
    )
    if unknown and not [s for s in request.state_filters if s in known]:
        found = []  # only unknown states asked for: nothing can match
    return respond(
        types.ListTransactionsResponse,
        unknown_state_filters=unknown,
        transaction_states=tuple(
            make_from(types.TransactionState, m, transaction_state=m.state) for m in found
        ),
    )


@handles(61, 0, 0)
async def describe_producers(ctx: RequestContext, request: Any) -> Any:
    """Each partition named is answered; one named many times is described once."""
    types = response_types(ctx)
    topics = await answer_topics(
        request.topics,
        lambda t: t.name,
        lambda t: t.partition_indexes,
        int,
        lambda name, index: _producers_of(ctx, types, name, index),
        lambda name, partitions: make(types.TopicResponse, name=name, partitions=partitions),
    )
    return respond(types.DescribeProducersResponse, topics=topics)


def _producers_of(ctx: RequestContext, types: Any, topic_name: str, index: int) -> Any:
    def failed(code: ErrorCode, message: str | None = None) -> Any:
        return respond(
            types.PartitionResponse, code, message, partition_index=index, active_producers=()
        )

    try:
        partition = ctx.state.topics.get(topic_name).partition(index)
    except StateError as exc:
        return failed(error_code_of(exc), str(exc))
    if partition.leader_id != ctx.broker_id:
        return failed(ErrorCode.not_leader_or_follower)
    txns = partition.log.txns
    open_txns = {} if txns is None else txns.open
    return respond(
        types.PartitionResponse,
        partition_index=index,
        active_producers=tuple(
            make_from(
                types.ProducerState,
                p,
                producer_epoch=p.epoch,
                current_txn_start_offset=open_txns.get(p.producer_id, -1),
            )
            for p in ctx.state.producers.active_on((topic_name, index))
        ),
    )
