"""Rules for the group APIs, classic and KIP-848."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from kafkatest.emulator.protocol.request_scope import topic_name
from kafkatest.emulator.server.authorization.core import (
    GROUP_DENIED,
    RT,
    RULES,
    TOPIC_DENIED,
    TXN_DENIED,
    Check,
    Op,
    Rule,
    error_response,
    per_topic,
    rule,
    whole,
)
from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.faults import Handler
from kafkatest.emulator.server.handlers.consumer_groups import refused_group
from kafkatest.emulator.server.responses import respond, response_types
from kafkatest.emulator.state.acls import AclOperation

for _key in (11, 12, 13, 14):  # JoinGroup, Heartbeat, LeaveGroup, SyncGroup
    RULES[_key] = whole(Op.READ, RT.GROUP, lambda r: r.group_id, GROUP_DENIED)


@rule(10)
async def _find_coordinator(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """DESCRIBE on the group, or on the transactional id; from v4 per key."""
    if getattr(request, "key_type", 0) == 1:
        operation_on, code = RT.TRANSACTIONAL_ID, TXN_DENIED
    else:
        operation_on, code = RT.GROUP, GROUP_DENIED
    if ctx.api_version < 4:
        if check(Op.DESCRIBE, operation_on, request.key):
            return await handler(ctx, request)
        return error_response(ctx, request, code)
    keys = request.coordinator_keys
    denied = tuple(k for k in keys if not check(Op.DESCRIBE, operation_on, k))
    if not denied:
        return await handler(ctx, request)
    injected = error_response(ctx, dataclasses.replace(request, coordinator_keys=denied), code)
    permitted = tuple(k for k in keys if k not in denied)
    if not permitted:
        return injected
    served = await handler(ctx, dataclasses.replace(request, coordinator_keys=permitted))
    return dataclasses.replace(served, coordinators=served.coordinators + injected.coordinators)


@rule(8)
async def _offset_commit(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """READ on the group (else every partition says so), then READ on each topic."""
    if not check(Op.READ, RT.GROUP, request.group_id):
        return error_response(ctx, request, GROUP_DENIED)
    return await per_topic(Op.READ)(check, ctx, request, handler)


@rule(9)
async def _offset_fetch(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """DESCRIBE on the group; DESCRIBE on each topic: named ones are refused per
    partition, and a fetch of all committed offsets leaves the others out."""
    if ctx.api_version >= 8:
        return await _offset_fetch_groups(check, ctx, request, handler)
    if not check(Op.DESCRIBE, RT.GROUP, request.group_id):
        if ctx.api_version < 2:  # no top-level error yet: every partition carries it
            return error_response(ctx, request, GROUP_DENIED)
        return respond(response_types(ctx).OffsetFetchResponse, GROUP_DENIED, topics=())
    if request.topics is not None:
        return await per_topic(Op.DESCRIBE)(check, ctx, request, handler)
    served = await handler(ctx, request)
    return dataclasses.replace(served, topics=_describable(check, ctx, served.topics))


def _describable(check: Check, ctx: RequestContext, topics: tuple[Any, ...]) -> tuple[Any, ...]:
    """The topics the client may describe; by id (v10+) an id naming no topic stays,
    answered UNKNOWN_TOPIC_ID before any ACL is asked, as Kafka answers it."""
    return tuple(t for t in topics if _may_describe(check, ctx, t))


def _may_describe(check: Check, ctx: RequestContext, topic: Any) -> bool:
    name = topic_name(topic, ctx.state)
    return name is None or check(Op.DESCRIBE, RT.TOPIC, name)


async def _offset_fetch_groups(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """OffsetFetch v8+: the same rules for each group of the request."""
    types = response_types(ctx)
    answers: dict[str, Any] = {}
    asked = []
    refused_topics: dict[str, Any] = {}
    for group in request.groups:
        if not check(Op.DESCRIBE, RT.GROUP, group.group_id):
            answers[group.group_id] = respond(
                types.OffsetFetchResponseGroup, GROUP_DENIED, group_id=group.group_id, topics=()
            )
            continue
        if group.topics:
            denied = tuple(t for t in group.topics if not _may_describe(check, ctx, t))
            if denied:
                one = dataclasses.replace(
                    request, groups=(dataclasses.replace(group, topics=denied),)
                )
                refused_topics[group.group_id] = error_response(ctx, one, TOPIC_DENIED).groups[0]
                group = dataclasses.replace(
                    group, topics=tuple(t for t in group.topics if t not in denied)
                )
        asked.append(group)
    served_groups: tuple[Any, ...] = ()
    if asked:
        served = await handler(ctx, dataclasses.replace(request, groups=tuple(asked)))
        served_groups = served.groups
    for group in served_groups:
        topics = _describable(check, ctx, group.topics)
        refused = refused_topics.get(group.group_id)
        if refused is not None:
            topics += refused.topics
        answers[group.group_id] = dataclasses.replace(group, topics=topics)
    return respond(
        types.OffsetFetchResponse,
        groups=tuple(answers[g.group_id] for g in request.groups if g.group_id in answers),
    )


def per_group(
    operation: AclOperation, request_field: str, response_field: str, distinct: bool = False
) -> Rule:
    """Each listed group needs `operation`; denied ones get GROUP_AUTHORIZATION_FAILED.

    `distinct`: the API answers a group named twice once (Kafka's DeleteGroups drops
    repeats before it authorizes), so a denied one is refused once too."""

    async def rule(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
        groups = getattr(request, request_field)
        if distinct:
            groups = tuple(dict.fromkeys(groups))
        denied = tuple(g for g in groups if not check(operation, RT.GROUP, g))
        if not denied:
            return await handler(ctx, request)
        permitted = tuple(g for g in groups if g not in denied)
        injected = error_response(
            ctx, dataclasses.replace(request, **{request_field: denied}), GROUP_DENIED
        )
        if not permitted:
            return injected
        served = await handler(ctx, dataclasses.replace(request, **{request_field: permitted}))
        merged = getattr(served, response_field) + getattr(injected, response_field)
        return dataclasses.replace(served, **{response_field: merged})

    return rule


RULES[15] = per_group(Op.DESCRIBE, "groups", "groups")  # DescribeGroups
RULES[42] = per_group(Op.DELETE, "groups_names", "results", distinct=True)  # DeleteGroups


@rule(16)
async def _list_groups(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """DESCRIBE on the cluster lists every group; without it, those with DESCRIBE."""
    served = await handler(ctx, request)
    if check.cluster(Op.DESCRIBE):
        return served
    return dataclasses.replace(
        served, groups=tuple(g for g in served.groups if check(Op.DESCRIBE, RT.GROUP, g.group_id))
    )


@rule(47)
async def _offset_delete(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    if not check(Op.DELETE, RT.GROUP, request.group_id):
        return error_response(ctx, dataclasses.replace(request, topics=()), GROUP_DENIED)
    return await per_topic(Op.READ)(check, ctx, request, handler)


@rule(68)
async def _consumer_group_heartbeat(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """READ on the group, and DESCRIBE on every subscribed topic name; Kafka asks
    only once KIP-848 groups are on (group.version 1), else answers UNSUPPORTED_VERSION."""
    if not ctx.state.features.consumer_protocol_enabled:
        return await handler(ctx, request)
    if not check(Op.READ, RT.GROUP, request.group_id):
        return error_response(ctx, request, GROUP_DENIED)
    names = request.subscribed_topic_names or ()
    if any(not check(Op.DESCRIBE, RT.TOPIC, n) for n in names):
        return error_response(ctx, request, TOPIC_DENIED)
    # A regex this heartbeat resolves keeps only the topics this member may describe.
    visible = functools.partial(check, Op.DESCRIBE, RT.TOPIC)
    return await handler(dataclasses.replace(ctx, topic_visible=visible), request)


_describe_consumer_groups = per_group(Op.DESCRIBE, "group_ids", "groups")


@rule(69)
async def _consumer_group_describe(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """DESCRIBE on each group, asked only while KIP-848 groups are on (as rule 68).

    Since KAFKA-18813 (Kafka 4.0) a group whose members' assignments or target
    assignments name a topic the client may not describe is answered with
    TOPIC_AUTHORIZATION_FAILED and nothing of the group, so a describe cannot reveal
    topic names."""
    if not ctx.state.features.consumer_protocol_enabled:
        return await handler(ctx, request)
    served = await _describe_consumer_groups(check, ctx, request, handler)
    return dataclasses.replace(
        served, groups=tuple(_without_hidden_topics(check, ctx, g) for g in served.groups)
    )


_HIDDEN_TOPICS = "The group has described topic(s) that the client is not authorized to describe."


def _without_hidden_topics(check: Check, ctx: RequestContext, group: Any) -> Any:
    named = {
        assigned.topic_name
        for member in group.members
        for assignment in (member.assignment, member.target_assignment)
        for assigned in assignment.topic_partitions
    }
    if all(check(Op.DESCRIBE, RT.TOPIC, name) for name in named):
        return group
    return refused_group(response_types(ctx), group.group_id, TOPIC_DENIED, _HIDDEN_TOPICS)
