"""Authorization as one layer: what each API needs, asked before its handler runs.

Kafka checks ACLs inside every API's handler (KafkaApis.scala); the emulator keeps
its handlers unaware of security and puts the same checks here, one rule per API:
a rule asks `Authorizer.authorize` for what Kafka asks, then either serves the
request, answers it whole with Kafka's error, or serves the permitted part and
merges Kafka's per-topic (or per-group, per-resource) error entries for the rest.
Dispatch calls `authorized_call` only while ACLs are on (`state.acls` is set), so a
broker without ACLs pays nothing. An API without a rule needs no permission, as
ApiVersions in Kafka.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.faults import Handler
from kafkatest.emulator.server.responses import NO_THROTTLE, make, response_types
from kafkatest.emulator.state.acls import (
    CLUSTER_NAME,
    AclOperation,
    Authorizer,
    ResourceType,
)
from kafkatest.faults.error_responses import error_response, merge_responses
from kafkatest.faults.request_scope import TOPIC_FIELDS, entity_tuples, topic_name

Op = AclOperation
RT = ResourceType
_TOPIC_DENIED = ErrorCode.topic_authorization_failed
_GROUP_DENIED = ErrorCode.group_authorization_failed
_CLUSTER_DENIED = ErrorCode.cluster_authorization_failed
_TXN_DENIED = ErrorCode.transactional_id_authorization_failed
_OPERATIONS_OMITTED = -(2**31)
#: DescribeConfigs / AlterConfigs resource types.
_CONFIG_TOPIC = 2
#: Bit 4 of a v2 record batch's attributes (at byte 21 of the batch header).
_TRANSACTIONAL_BATCH = 0x10


class Check:
    """The questions one request may ask, for its principal and client host."""

    __slots__ = ("acls", "host", "principal")

    def __init__(self, acls: Authorizer, ctx: RequestContext) -> None:
        self.acls = acls
        self.principal = ctx.principal
        self.host = ctx.peer.rsplit(":", 1)[0].strip("[]")

    def __call__(self, operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
        return self.acls.authorize(self.principal, self.host, operation, resource_type, name)

    def cluster(self, operation: AclOperation) -> bool:
        return self(operation, RT.CLUSTER, CLUSTER_NAME)

    def any_of_type(self, operation: AclOperation, resource_type: ResourceType) -> bool:
        return self.acls.authorize_any(self.principal, self.host, operation, resource_type)


Rule = Callable[[Check, RequestContext, Any, Handler], Awaitable[Any]]
_RULES: dict[int, Rule] = {}


async def authorized_call(
    acls: Authorizer, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """`handler`'s answer to `request` as Kafka would give it to this principal."""
    rule = _RULES.get(ctx.api_key)
    if rule is None:
        return await handler(ctx, request)
    return await rule(Check(acls, ctx), ctx, request, handler)


def _rule(*api_keys: int) -> Callable[[Rule], Rule]:
    def register(rule: Rule) -> Rule:
        for key in api_keys:
            _RULES[key] = rule
        return rule

    return register


# -- shapes of denial -------------------------------------------------------------


def _whole(
    operation: AclOperation,
    resource_type: ResourceType,
    name_of: Callable[[Any], str],
    code: ErrorCode,
) -> Rule:
    """Allowed or answered whole with `code` (group APIs, cluster APIs)."""

    async def rule(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
        if check(operation, resource_type, name_of(request)):
            return await handler(ctx, request)
        return error_response(ctx, request, code)

    return rule


def _topic_entries(request: Any) -> list[tuple[str, tuple[Any, ...]]]:
    return [
        (field, items)
        for field, items in entity_tuples(request)
        if any(hasattr(items[0], name) for name in (*TOPIC_FIELDS, "topic_id"))
    ]


def _split_topics(ctx: RequestContext, request: Any, denied: set[str]) -> tuple[Any, Any, bool]:
    """(permitted part, denied part, whether any topic is permitted)."""
    keep: dict[str, tuple[Any, ...]] = {}
    drop: dict[str, tuple[Any, ...]] = {}
    for field, items in _topic_entries(request):
        keep[field] = tuple(i for i in items if topic_name(i, ctx.state) not in denied)
        drop[field] = tuple(i for i in items if topic_name(i, ctx.state) in denied)
    names = getattr(request, "topic_names", None)
    if isinstance(names, tuple):
        keep["topic_names"] = tuple(n for n in names if n not in denied)
        drop["topic_names"] = tuple(n for n in names if n in denied)
    left = any(keep.values())
    return dataclasses.replace(request, **keep), dataclasses.replace(request, **drop), left


def _requested_topics(ctx: RequestContext, request: Any) -> set[str]:
    names = {
        name
        for _field, items in _topic_entries(request)
        for item in items
        if (name := topic_name(item, ctx.state)) is not None
    }
    names.update(getattr(request, "topic_names", None) or ())
    return names


async def _serve_permitted(
    ctx: RequestContext, request: Any, handler: Handler, denied: set[str], code: ErrorCode
) -> Any:
    """Serve the permitted topics and answer each denied one's entries with `code`."""
    if not denied:
        return await handler(ctx, request)
    permitted, refused, left = _split_topics(ctx, request, denied)
    injected = error_response(ctx, refused, code)
    if not left:
        return injected
    served = await handler(ctx, permitted)
    return injected if served is None else merge_responses(served, injected)


def _per_topic(operation: AclOperation) -> Rule:
    """Each topic needs `operation`; denied ones get TOPIC_AUTHORIZATION_FAILED."""

    async def rule(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
        denied = {t for t in _requested_topics(ctx, request) if not check(operation, RT.TOPIC, t)}
        return await _serve_permitted(ctx, request, handler, denied, _TOPIC_DENIED)

    return rule


# -- the rules (KafkaApis.scala, Kafka 4.1) ---------------------------------------

_RULES[1] = _per_topic(Op.READ)  # Fetch (consumers; the emulator has no followers)
_RULES[2] = _per_topic(Op.DESCRIBE)  # ListOffsets
_RULES[21] = _per_topic(Op.DELETE)  # DeleteRecords
_RULES[20] = _per_topic(Op.DELETE)  # DeleteTopics
_RULES[23] = _per_topic(Op.DESCRIBE)  # OffsetForLeaderEpoch
_RULES[37] = _per_topic(Op.ALTER)  # CreatePartitions
_RULES[75] = _per_topic(Op.DESCRIBE)  # DescribeTopicPartitions (named topics)

for _key in (11, 12, 13, 14):  # JoinGroup, Heartbeat, LeaveGroup, SyncGroup
    _RULES[_key] = _whole(Op.READ, RT.GROUP, lambda r: r.group_id, _GROUP_DENIED)
_RULES[29] = _whole(Op.DESCRIBE, RT.CLUSTER, lambda r: CLUSTER_NAME, _CLUSTER_DENIED)
_RULES[30] = _whole(Op.ALTER, RT.CLUSTER, lambda r: CLUSTER_NAME, _CLUSTER_DENIED)  # CreateAcls
_RULES[31] = _whole(Op.ALTER, RT.CLUSTER, lambda r: CLUSTER_NAME, _CLUSTER_DENIED)  # DeleteAcls
# The cluster-wide admin APIs of one broker's logs, leaders and quorum (KafkaApis:
# DESCRIBE or ALTER on the CLUSTER resource).
for _key, _operation in (
    (35, Op.DESCRIBE),
    (43, Op.ALTER),
    (45, Op.ALTER),
    (46, Op.DESCRIBE),
    (55, Op.DESCRIBE),
):
    _RULES[_key] = _whole(_operation, RT.CLUSTER, lambda r: CLUSTER_NAME, _CLUSTER_DENIED)


@_rule(0)
async def _produce(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """WRITE on each topic; transactional records also need WRITE on their id."""
    if _has_transactional_records(request) and not (
        request.transactional_id is not None
        and check(Op.WRITE, RT.TRANSACTIONAL_ID, request.transactional_id)
    ):
        return None if request.acks == 0 else error_response(ctx, request, _TXN_DENIED)
    denied = {t for t in _requested_topics(ctx, request) if not check(Op.WRITE, RT.TOPIC, t)}
    response = await _serve_permitted(ctx, request, handler, denied, _TOPIC_DENIED)
    return None if request.acks == 0 else response


def _has_transactional_records(request: Any) -> bool:
    for topic in request.topic_data:
        for data in topic.partition_data:
            records = data.records
            if records and len(records) > 22 and records[22] & _TRANSACTIONAL_BATCH:
                return True
    return False


@_rule(22)
async def _init_producer_id(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """A transactional id needs WRITE on it; an idempotent producer IDEMPOTENT_WRITE
    on the cluster or, since KIP-679, WRITE on any topic."""
    if request.transactional_id is not None:
        if check(Op.WRITE, RT.TRANSACTIONAL_ID, request.transactional_id):
            return await handler(ctx, request)
        return error_response(ctx, request, _TXN_DENIED)
    if check.cluster(Op.IDEMPOTENT_WRITE) or check.any_of_type(Op.WRITE, RT.TOPIC):
        return await handler(ctx, request)
    return error_response(ctx, request, _CLUSTER_DENIED)


@_rule(10)
async def _find_coordinator(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """DESCRIBE on the group, or on the transactional id; from v4 per key."""
    if getattr(request, "key_type", 0) == 1:
        operation_on, code = RT.TRANSACTIONAL_ID, _TXN_DENIED
    else:
        operation_on, code = RT.GROUP, _GROUP_DENIED
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


@_rule(8)
async def _offset_commit(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """READ on the group (else every partition says so), then READ on each topic."""
    if not check(Op.READ, RT.GROUP, request.group_id):
        return error_response(ctx, request, _GROUP_DENIED)
    return await _per_topic(Op.READ)(check, ctx, request, handler)


@_rule(9)
async def _offset_fetch(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """DESCRIBE on the group; DESCRIBE on each topic: named ones are refused per
    partition, and a fetch of all committed offsets leaves the others out."""
    if ctx.api_version >= 8:
        return await _offset_fetch_groups(check, ctx, request, handler)
    if not check(Op.DESCRIBE, RT.GROUP, request.group_id):
        if ctx.api_version < 2:  # no top-level error yet: every partition carries it
            return error_response(ctx, request, _GROUP_DENIED)
        return make(
            response_types(ctx).OffsetFetchResponse,
            throttle_time=NO_THROTTLE,
            error_code=_GROUP_DENIED,
            topics=(),
        )
    if request.topics is not None:
        return await _per_topic(Op.DESCRIBE)(check, ctx, request, handler)
    served = await handler(ctx, request)
    return dataclasses.replace(served, topics=_describable(check, served.topics))


def _describable(check: Check, topics: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(t for t in topics if check(Op.DESCRIBE, RT.TOPIC, t.name))


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
            answers[group.group_id] = make(
                types.OffsetFetchResponseGroup,
                group_id=group.group_id,
                topics=(),
                error_code=_GROUP_DENIED,
            )
            continue
        if group.topics:
            denied = tuple(t for t in group.topics if not check(Op.DESCRIBE, RT.TOPIC, t.name))
            if denied:
                one = dataclasses.replace(
                    request, groups=(dataclasses.replace(group, topics=denied),)
                )
                refused_topics[group.group_id] = error_response(ctx, one, _TOPIC_DENIED).groups[0]
                group = dataclasses.replace(
                    group, topics=tuple(t for t in group.topics if t not in denied)
                )
        asked.append(group)
    served_groups: tuple[Any, ...] = ()
    if asked:
        served = await handler(ctx, dataclasses.replace(request, groups=tuple(asked)))
        served_groups = served.groups
    for group in served_groups:
        topics = _describable(check, group.topics)
        refused = refused_topics.get(group.group_id)
        if refused is not None:
            topics += refused.topics
        answers[group.group_id] = dataclasses.replace(group, topics=topics)
    return make(
        types.OffsetFetchResponse,
        throttle_time=NO_THROTTLE,
        groups=tuple(answers[g.group_id] for g in request.groups if g.group_id in answers),
    )


def _per_group(operation: AclOperation, request_field: str, response_field: str) -> Rule:
    """Each listed group needs `operation`; denied ones get GROUP_AUTHORIZATION_FAILED."""

    async def rule(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
        groups = getattr(request, request_field)
        denied = tuple(g for g in groups if not check(operation, RT.GROUP, g))
        if not denied:
            return await handler(ctx, request)
        permitted = tuple(g for g in groups if g not in denied)
        injected = error_response(
            ctx, dataclasses.replace(request, **{request_field: denied}), _GROUP_DENIED
        )
        if not permitted:
            return injected
        served = await handler(ctx, dataclasses.replace(request, **{request_field: permitted}))
        merged = getattr(served, response_field) + getattr(injected, response_field)
        return dataclasses.replace(served, **{response_field: merged})

    return rule


_RULES[15] = _per_group(Op.DESCRIBE, "groups", "groups")  # DescribeGroups
_RULES[42] = _per_group(Op.DELETE, "groups_names", "results")  # DeleteGroups


@_rule(16)
async def _list_groups(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """DESCRIBE on the cluster lists every group; without it, those with DESCRIBE."""
    served = await handler(ctx, request)
    if check.cluster(Op.DESCRIBE):
        return served
    return dataclasses.replace(
        served, groups=tuple(g for g in served.groups if check(Op.DESCRIBE, RT.GROUP, g.group_id))
    )


@_rule(47)
async def _offset_delete(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    if not check(Op.DELETE, RT.GROUP, request.group_id):
        return error_response(ctx, dataclasses.replace(request, topics=()), _GROUP_DENIED)
    return await _per_topic(Op.READ)(check, ctx, request, handler)


@_rule(19)
async def _create_topics(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """CREATE on the cluster, or on each topic."""
    if check.cluster(Op.CREATE):
        return await handler(ctx, request)
    denied = {t.name for t in request.topics if not check(Op.CREATE, RT.TOPIC, t.name)}
    return await _serve_permitted(ctx, request, handler, denied, _TOPIC_DENIED)


def _configs_rule(operation: AclOperation) -> Rule:
    """Topic resources need `operation` on the topic, broker ones on the cluster."""

    async def rule(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
        def permitted(resource: Any) -> bool:
            if resource.resource_type == _CONFIG_TOPIC:
                return check(operation, RT.TOPIC, resource.resource_name)
            return check.cluster(operation)

        allowed = tuple(r for r in request.resources if permitted(r))
        if len(allowed) == len(request.resources):
            return await handler(ctx, request)
        results_field = "results" if ctx.api_key == 32 else "responses"
        injected: list[Any] = []
        for resource in request.resources:
            if permitted(resource):
                continue
            code = _TOPIC_DENIED if resource.resource_type == _CONFIG_TOPIC else _CLUSTER_DENIED
            one = error_response(ctx, dataclasses.replace(request, resources=(resource,)), code)
            injected.extend(getattr(one, results_field))
        if not allowed:
            served = error_response(ctx, dataclasses.replace(request, resources=()), ErrorCode.none)
        else:
            served = await handler(ctx, dataclasses.replace(request, resources=allowed))
        return dataclasses.replace(
            served, **{results_field: getattr(served, results_field) + tuple(injected)}
        )

    return rule


_RULES[32] = _configs_rule(Op.DESCRIBE_CONFIGS)
_RULES[33] = _configs_rule(Op.ALTER_CONFIGS)
_RULES[44] = _configs_rule(Op.ALTER_CONFIGS)


@_rule(3)
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
        make(
            types.MetadataResponseTopic,
            error_code=_TOPIC_DENIED,
            name=name,
            topic_id=topic_id or uuid.UUID(int=0),
            is_internal=False,
            partitions=(),
            topic_authorized_operations=_OPERATIONS_OMITTED,
        )
        for name, topic_id in refused
    )
    return dataclasses.replace(served, topics=topics + denied)


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
        return error_response(ctx, request, _TXN_DENIED)
    if then is None:
        return await handler(ctx, request)
    return await then(check, ctx, request, handler)


@_rule(24)
async def _add_partitions_to_txn(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """v0-3 (clients): WRITE on the id and on each topic; a denied topic fails the
    request, its partitions TOPIC_AUTHORIZATION_FAILED and the rest
    OPERATION_NOT_ATTEMPTED. v4+ comes from brokers: CLUSTER_ACTION."""
    if ctx.api_version >= 4:
        if check.cluster(Op.CLUSTER_ACTION):
            return await handler(ctx, request)
        return error_response(ctx, request, _CLUSTER_DENIED)

    async def topics(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
        denied = {t for t in _requested_topics(ctx, request) if not check(Op.WRITE, RT.TOPIC, t)}
        if not denied:
            return await handler(ctx, request)
        permitted, refused, left = _split_topics(ctx, request, denied)
        answer = error_response(ctx, refused, _TOPIC_DENIED)
        if left:
            skipped = error_response(ctx, permitted, ErrorCode.operation_not_attempted)
            answer = merge_responses(answer, skipped)
        return answer

    return await _txn_write_then(check, ctx, request, handler, topics)


@_rule(25)
async def _add_offsets_to_txn(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    return await _txn_write_then(
        check, ctx, request, handler, _whole(Op.READ, RT.GROUP, lambda r: r.group_id, _GROUP_DENIED)
    )


@_rule(26)
async def _end_txn(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    return await _txn_write_then(check, ctx, request, handler, None)


@_rule(28)
async def _txn_offset_commit(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """WRITE on the id, READ on the group (else every partition says so), READ per topic."""

    async def group_then_topics(
        check: Check, ctx: RequestContext, request: Any, handler: Handler
    ) -> Any:
        if not check(Op.READ, RT.GROUP, request.group_id):
            return error_response(ctx, request, _GROUP_DENIED)
        return await _per_topic(Op.READ)(check, ctx, request, handler)

    return await _txn_write_then(check, ctx, request, handler, group_then_topics)


_RULES[61] = _per_topic(Op.READ)  # DescribeProducers


@_rule(65)
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
            by_id[denied] = make(
                types.TransactionState,
                error_code=_TXN_DENIED,
                transactional_id=denied,
                transaction_state="",
                transaction_timeout=NO_THROTTLE,
                transaction_start_time=None,
                producer_id=-1,
                producer_epoch=-1,
                topics=(),
            )
    states = tuple(by_id[i] for i in dict.fromkeys(ids) if i in by_id)
    return dataclasses.replace(served, transaction_states=states)


@_rule(66)
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


# -- SCRAM credentials, KIP-848 groups --------------------------------------------

_RULES[50] = _whole(Op.DESCRIBE, RT.CLUSTER, lambda r: CLUSTER_NAME, _CLUSTER_DENIED)


@_rule(51)
async def _alter_scram(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """ALTER on the cluster, else each user named gets CLUSTER_AUTHORIZATION_FAILED."""
    if check.cluster(Op.ALTER):
        return await handler(ctx, request)
    types = response_types(ctx)
    users = dict.fromkeys(c.name for c in (*request.deletions, *request.upsertions))
    results = tuple(
        make(
            types.AlterUserScramCredentialsResult,
            user=user,
            error_code=_CLUSTER_DENIED,
            error_message=None,
        )
        for user in users
    )
    return make(types.AlterUserScramCredentialsResponse, throttle_time=NO_THROTTLE, results=results)


@_rule(68)
async def _consumer_group_heartbeat(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """READ on the group, and DESCRIBE on every subscribed topic name."""
    if not check(Op.READ, RT.GROUP, request.group_id):
        return error_response(ctx, request, _GROUP_DENIED)
    names = request.subscribed_topic_names or ()
    if any(not check(Op.DESCRIBE, RT.TOPIC, n) for n in names):
        return error_response(ctx, request, _TOPIC_DENIED)
    return await handler(ctx, request)


_RULES[69] = _per_group(Op.DESCRIBE, "group_ids", "groups")  # ConsumerGroupDescribe
