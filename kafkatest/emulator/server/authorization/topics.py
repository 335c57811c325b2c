"""Rules for the topic, configs, cluster, ACL and SCRAM APIs."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.protocol.request_scope import topic_name
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
    per_topic,
    requested_topics,
    rule,
    serve_permitted,
    whole,
)
from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.faults import Handler
from kafkatest.emulator.server.operations_field import OPERATIONS_OMITTED
from kafkatest.emulator.server.responses import make, respond, response_types
from kafkatest.emulator.state.acls import CLUSTER_NAME, AclOperation

#: DescribeConfigs / AlterConfigs resource types.
_CONFIG_TOPIC, _CONFIG_GROUP = 2, 32
_DENIED_BY_TYPE = {_CONFIG_TOPIC: TOPIC_DENIED, _CONFIG_GROUP: GROUP_DENIED}
#: Bit 4 of a v2 record batch's attributes (at byte 21 of the batch header).
_TRANSACTIONAL_BATCH = 0x10

# -- the rules (KafkaApis.scala, Kafka 4.1) ---------------------------------------

RULES[1] = per_topic(Op.READ)  # Fetch (consumers; the emulator has no followers)
RULES[2] = per_topic(Op.DESCRIBE)  # ListOffsets
RULES[21] = per_topic(Op.DELETE)  # DeleteRecords
RULES[20] = per_topic(Op.DELETE)  # DeleteTopics
RULES[23] = per_topic(Op.DESCRIBE)  # OffsetForLeaderEpoch
RULES[37] = per_topic(Op.ALTER)  # CreatePartitions
RULES[75] = per_topic(Op.DESCRIBE)  # DescribeTopicPartitions (named topics)

RULES[29] = whole(Op.DESCRIBE, RT.CLUSTER, lambda r: CLUSTER_NAME, CLUSTER_DENIED)
RULES[30] = whole(Op.ALTER, RT.CLUSTER, lambda r: CLUSTER_NAME, CLUSTER_DENIED)  # CreateAcls
RULES[31] = whole(Op.ALTER, RT.CLUSTER, lambda r: CLUSTER_NAME, CLUSTER_DENIED)  # DeleteAcls
# The cluster-wide admin APIs of one broker's logs, leaders and quorum (KafkaApis:
# DESCRIBE or ALTER on the CLUSTER resource).
for _key, _operation in (
    (35, Op.DESCRIBE),
    (43, Op.ALTER),
    (45, Op.ALTER),
    (46, Op.DESCRIBE),
    (55, Op.DESCRIBE),
):
    RULES[_key] = whole(_operation, RT.CLUSTER, lambda r: CLUSTER_NAME, CLUSTER_DENIED)


@rule(0)
async def _produce(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """WRITE on each topic; transactional records also need WRITE on their id."""
    if _has_transactional_records(request) and not (
        request.transactional_id is not None
        and check(Op.WRITE, RT.TRANSACTIONAL_ID, request.transactional_id)
    ):
        return None if request.acks == 0 else error_response(ctx, request, TXN_DENIED)
    denied = {t for t in requested_topics(ctx, request) if not check(Op.WRITE, RT.TOPIC, t)}
    response = await serve_permitted(ctx, request, handler, denied, TOPIC_DENIED)
    return None if request.acks == 0 else response


def _has_transactional_records(request: Any) -> bool:
    for topic in request.topic_data:
        for data in topic.partition_data:
            records = data.records
            if records and len(records) > 22 and records[22] & _TRANSACTIONAL_BATCH:
                return True
    return False


@rule(22)
async def _init_producer_id(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """A transactional id needs WRITE on it; an idempotent producer IDEMPOTENT_WRITE
    on the cluster or, since KIP-679, WRITE on any topic."""
    if request.transactional_id is not None:
        if check(Op.WRITE, RT.TRANSACTIONAL_ID, request.transactional_id):
            return await handler(ctx, request)
        return error_response(ctx, request, TXN_DENIED)
    if check.cluster(Op.IDEMPOTENT_WRITE) or check.any_of_type(Op.WRITE, RT.TOPIC):
        return await handler(ctx, request)
    return error_response(ctx, request, CLUSTER_DENIED)


@rule(19)
async def _create_topics(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """CREATE on the cluster, or on each topic."""
    if check.cluster(Op.CREATE):
        return await handler(ctx, request)
    denied = {t.name for t in request.topics if not check(Op.CREATE, RT.TOPIC, t.name)}
    return await serve_permitted(ctx, request, handler, denied, TOPIC_DENIED)


def _configsrule(operation: AclOperation) -> Rule:
    """Topic and group resources need `operation` on the topic or group; broker,
    logger and client-metrics ones on the cluster."""

    async def rule(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
        # A resource may be named many times (DescribeConfigs answers each naming):
        # each distinct one is checked, and its refusal built, once.
        decisions: dict[tuple[int, str], bool] = {}

        def permitted(resource: Any) -> bool:
            key = (resource.resource_type, resource.resource_name)
            decision = decisions.get(key)
            if decision is None:
                if resource.resource_type == _CONFIG_TOPIC:
                    decision = check(operation, RT.TOPIC, resource.resource_name)
                elif resource.resource_type == _CONFIG_GROUP:
                    decision = check(operation, RT.GROUP, resource.resource_name)
                else:
                    decision = check.cluster(operation)
                decisions[key] = decision
            return decision

        allowed = tuple(r for r in request.resources if permitted(r))
        if len(allowed) == len(request.resources):
            return await handler(ctx, request)
        results_field = "results" if ctx.api_key == 32 else "responses"
        refusals: dict[tuple[int, str], tuple[Any, ...]] = {}
        injected: list[Any] = []
        for resource in request.resources:
            if permitted(resource):
                continue
            key = (resource.resource_type, resource.resource_name)
            if key not in refusals:
                code = _DENIED_BY_TYPE.get(resource.resource_type, CLUSTER_DENIED)
                one = error_response(ctx, dataclasses.replace(request, resources=(resource,)), code)
                refusals[key] = getattr(one, results_field)
            injected.extend(refusals[key])
        if not allowed:
            served = error_response(ctx, dataclasses.replace(request, resources=()), ErrorCode.none)
        else:
            served = await handler(ctx, dataclasses.replace(request, resources=allowed))
        return dataclasses.replace(
            served, **{results_field: getattr(served, results_field) + tuple(injected)}
        )

    return rule


RULES[32] = _configsrule(Op.DESCRIBE_CONFIGS)
RULES[33] = _configsrule(Op.ALTER_CONFIGS)
RULES[44] = _configsrule(Op.ALTER_CONFIGS)


@rule(3)
async def _metadata(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """DESCRIBE on each topic. Asking for all topics leaves out the others unseen;
    named ones are refused by name with the all-zero id. Auto-creating a topic
    needs CREATE on the cluster or on that topic, else it is refused too."""
    if request.topics is None or (ctx.api_version == 0 and not request.topics):
        served = await handler(ctx, request)
        return dataclasses.replace(
            served,
            topics=tuple(t for t in served.topics if check(Op.DESCRIBE, RT.TOPIC, t.name)),
        )
    state = ctx.state
    refused: list[tuple[str | None, Any]] = []
    kept = []
    auto_create = getattr(request, "allow_auto_topic_creation", True) and (
        state.settings.auto_create_topics
    )
    may_create_any = None
    for wanted in request.topics:
        name = topic_name(wanted, state)
        if name is None:  # an unknown topic id: the handler says so
            kept.append(wanted)
            continue
        if not check(Op.DESCRIBE, RT.TOPIC, name):
            by_id = wanted.name is None
            refused.append((None if by_id else name, wanted.topic_id if by_id else None))
            continue
        if auto_create and state.topics.find(name) is None:
            if may_create_any is None:
                may_create_any = check.cluster(Op.CREATE)
            if not may_create_any and not check(Op.CREATE, RT.TOPIC, name):
                refused.append((name, None))
                continue
        kept.append(wanted)
    if not refused:
        return await handler(ctx, request)
    served = await handler(ctx, dataclasses.replace(request, topics=tuple(kept)))
    topics = served.topics if kept else ()
    types = response_types(ctx)
    denied = tuple(
        respond(
            types.MetadataResponseTopic,
            TOPIC_DENIED,
            name=name,
            topic_id=topic_id or uuid.UUID(int=0),
            is_internal=False,
            partitions=(),
            topic_authorized_operations=OPERATIONS_OMITTED,
        )
        for name, topic_id in refused
    )
    return dataclasses.replace(served, topics=topics + denied)


# -- client quotas, SCRAM credentials, KIP-848 groups ------------------------------


@rule(48)
async def _describe_quotas(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """DESCRIBE_CONFIGS on the cluster, else the request fails whole (no entries)."""
    if check.cluster(Op.DESCRIBE_CONFIGS):
        return await handler(ctx, request)
    return respond(response_types(ctx).DescribeClientQuotasResponse, CLUSTER_DENIED, entries=None)


@rule(49)
async def _alter_quotas(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """ALTER_CONFIGS on the cluster, else every entity gets CLUSTER_AUTHORIZATION_FAILED."""
    if check.cluster(Op.ALTER_CONFIGS):
        return await handler(ctx, request)
    types = response_types(ctx)
    entries = tuple(
        respond(
            types.EntryData,
            CLUSTER_DENIED,
            "Cluster authorization failed.",
            entity=tuple(
                make(types.EntityData, entity_type=e.entity_type, entity_name=e.entity_name)
                for e in entry.entity
            ),
        )
        for entry in request.entries
    )
    return respond(types.AlterClientQuotasResponse, entries=entries)


# ListConfigResources: DESCRIBE_CONFIGS on the cluster.
RULES[74] = whole(Op.DESCRIBE_CONFIGS, RT.CLUSTER, lambda r: CLUSTER_NAME, CLUSTER_DENIED)


@rule(50)
async def _describe_scram(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """DESCRIBE on the cluster, else Kafka 4.1's error answer: the error at the top, and
    for each user named one result carrying it but no name (Kafka's request builds
    them from the count of names alone), so clients read the refusal at the top.

    The results are one shared entity, so a long list of names costs no more than
    its own length. A null list is answered with no results (Kafka 4.1.1 never
    answers it: its error answer walks the null list and fails).
    """
    if check.cluster(Op.DESCRIBE):
        return await handler(ctx, request)
    types = response_types(ctx)
    denied = respond(
        types.DescribeUserScramCredentialsResult, CLUSTER_DENIED, user="", credential_infos=()
    )
    return respond(
        types.DescribeUserScramCredentialsResponse,
        CLUSTER_DENIED,
        results=(denied,) * len(request.users or ()),
    )


@rule(51)
async def _alter_scram(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """ALTER on the cluster, else each user named gets CLUSTER_AUTHORIZATION_FAILED."""
    if check.cluster(Op.ALTER):
        return await handler(ctx, request)
    types = response_types(ctx)
    users = dict.fromkeys(c.name for c in (*request.deletions, *request.upsertions))
    results = tuple(
        respond(types.AlterUserScramCredentialsResult, CLUSTER_DENIED, user=user) for user in users
    )
    return respond(types.AlterUserScramCredentialsResponse, results=results)
