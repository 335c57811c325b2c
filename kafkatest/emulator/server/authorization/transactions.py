"""Rules for the transaction APIs."""

from __future__ import annotations

import dataclasses
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.authorization.core import (
    CLUSTER_DENIED,
    GROUP_DENIED,
    RT,
    RULES,
    TOPIC_DENIED,
    TXN_DENIED,
    Check,
    Op,
    Rule,
    error_response,
    merge_responses,
    per_topic,
    requested_topics,
    rule,
    split_topics,
    whole,
)
from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.faults import Handler
from kafkatest.emulator.server.responses import NO_THROTTLE, datetime_at_ms, respond, response_types

# -- transactions -----------------------------------------------------------------


def _txn_id(request: Any) -> str:
    """AddPartitionsToTxn v0-3 names the field after the versions that carry it."""
    found = getattr(request, "transactional_id", None)
    return str(found if found is not None else request.v3_and_below_transactional_id)


async def _txn_write_then(
    check: Check, ctx: RequestContext, request: Any, handler: Handler, then: Rule | None
) -> Any:
    """WRITE on the request's transactional id, then `then` (or the handler)."""
    if not check(Op.WRITE, RT.TRANSACTIONAL_ID, _txn_id(request)):
        return error_response(ctx, request, TXN_DENIED)
    if then is None:
        return await handler(ctx, request)
    return await then(check, ctx, request, handler)


@rule(24)
async def _add_partitions_to_txn(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """v0-3 (clients): WRITE on the id and on each topic; a denied topic fails the
    request, its partitions TOPIC_AUTHORIZATION_FAILED and the rest
    OPERATION_NOT_ATTEMPTED. v4+ comes from brokers: CLUSTER_ACTION."""
    if ctx.api_version >= 4:
        if check.cluster(Op.CLUSTER_ACTION):
            return await handler(ctx, request)
        return error_response(ctx, request, CLUSTER_DENIED)

    async def topics(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
        denied = {t for t in requested_topics(ctx, request) if not check(Op.WRITE, RT.TOPIC, t)}
        if not denied:
            return await handler(ctx, request)
        permitted, refused, left = split_topics(ctx, request, denied)
        answer = error_response(ctx, refused, TOPIC_DENIED)
        if left:
            skipped = error_response(ctx, permitted, ErrorCode.operation_not_attempted)
            answer = merge_responses(answer, skipped)
        return answer

    return await _txn_write_then(check, ctx, request, handler, topics)


@rule(25)
async def _add_offsets_to_txn(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    return await _txn_write_then(
        check, ctx, request, handler, whole(Op.READ, RT.GROUP, lambda r: r.group_id, GROUP_DENIED)
    )


@rule(26)
async def _end_txn(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    return await _txn_write_then(check, ctx, request, handler, None)


@rule(28)
async def _txn_offset_commit(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """WRITE on the id, READ on the group (else every partition says so), READ per topic."""

    async def group_then_topics(
        check: Check, ctx: RequestContext, request: Any, handler: Handler
    ) -> Any:
        if not check(Op.READ, RT.GROUP, request.group_id):
            return error_response(ctx, request, GROUP_DENIED)
        return await per_topic(Op.READ)(check, ctx, request, handler)

    return await _txn_write_then(check, ctx, request, handler, group_then_topics)


RULES[61] = per_topic(Op.READ)  # DescribeProducers


@rule(65)
async def _describe_transactions(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """DESCRIBE on each id, else that id's entry says TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
    partitions of topics without DESCRIBE are left out."""
    ids = request.transactional_ids
    permitted = tuple(i for i in ids if check(Op.DESCRIBE, RT.TRANSACTIONAL_ID, i))
    served = await handler(ctx, dataclasses.replace(request, transactional_ids=permitted))
    by_id = {
        s.transactional_id: dataclasses.replace(
            s, topics=tuple(t for t in s.topics if check(Op.DESCRIBE, RT.TOPIC, t.topic))
        )
        for s in served.transaction_states
    }
    types = response_types(ctx)
    for denied in ids:
        if denied not in permitted:
            # The message's defaults, as Kafka leaves them (0 ms, producer id 0).
            by_id[denied] = respond(
                types.TransactionState,
                TXN_DENIED,
                transactional_id=denied,
                transaction_state="",
                transaction_timeout=NO_THROTTLE,
                transaction_start_time=datetime_at_ms(0),
                producer_id=0,
                producer_epoch=0,
                topics=(),
            )
    states = tuple(by_id[i] for i in dict.fromkeys(ids) if i in by_id)
    return dataclasses.replace(served, transaction_states=states)


@rule(66)
async def _list_transactions(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """Only the transactions whose id the principal may DESCRIBE."""
    served = await handler(ctx, request)
    return dataclasses.replace(
        served,
        transaction_states=tuple(
            s
            for s in served.transaction_states
            if check(Op.DESCRIBE, RT.TRANSACTIONAL_ID, s.transactional_id)
        ),
    )
