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
from collections.abc import Awaitable, Callable
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.protocol.error_responses import error_response, merge_responses
from kafkatest.emulator.protocol.request_scope import TOPIC_FIELDS, entity_tuples, topic_name
from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.faults import Handler
from kafkatest.emulator.state.acls import (
    CLUSTER_NAME,
    AclOperation,
    Authorizer,
    ResourceType,
)

Op = AclOperation
RT = ResourceType
TOPIC_DENIED = ErrorCode.topic_authorization_failed
GROUP_DENIED = ErrorCode.group_authorization_failed
CLUSTER_DENIED = ErrorCode.cluster_authorization_failed
TXN_DENIED = ErrorCode.transactional_id_authorization_failed


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
RULES: dict[int, Rule] = {}
#: API key -> what rewrites its answer for the principal after the rule (`operations`).
NARROWERS: dict[int, Callable[[Check, Any], Any]] = {}


async def authorized_call(
    acls: Authorizer, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """`handler`'s answer to `request` as Kafka would give it to this principal."""
    rule = RULES.get(ctx.api_key)
    narrow = NARROWERS.get(ctx.api_key)
    if rule is None and narrow is None:
        return await handler(ctx, request)
    check = Check(acls, ctx)
    response = await (handler(ctx, request) if rule is None else rule(check, ctx, request, handler))
    return response if narrow is None or response is None else narrow(check, response)


def rule(*api_keys: int) -> Callable[[Rule], Rule]:
    def register(rule: Rule) -> Rule:
        for key in api_keys:
            RULES[key] = rule
        return rule

    return register


# -- shapes of denial -------------------------------------------------------------


def whole(
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


def topic_entries(request: Any) -> list[tuple[str, tuple[Any, ...]]]:
    return [
        (field, items)
        for field, items in entity_tuples(request)
        if any(hasattr(items[0], name) for name in (*TOPIC_FIELDS, "topic_id"))
    ]


def split_topics(ctx: RequestContext, request: Any, denied: set[str]) -> tuple[Any, Any, bool]:
    """(permitted part, denied part, whether any topic is permitted)."""
    keep: dict[str, tuple[Any, ...]] = {}
    drop: dict[str, tuple[Any, ...]] = {}
    for field, items in topic_entries(request):
        keep[field] = tuple(i for i in items if topic_name(i, ctx.state) not in denied)
        drop[field] = tuple(i for i in items if topic_name(i, ctx.state) in denied)
    names = getattr(request, "topic_names", None)
    if isinstance(names, tuple):
        keep["topic_names"] = tuple(n for n in names if n not in denied)
        drop["topic_names"] = tuple(n for n in names if n in denied)
    left = any(keep.values())
    return dataclasses.replace(request, **keep), dataclasses.replace(request, **drop), left


def requested_topics(ctx: RequestContext, request: Any) -> set[str]:
    names = {
        name
        for _field, items in topic_entries(request)
        for item in items
        if (name := topic_name(item, ctx.state)) is not None
    }
    names.update(getattr(request, "topic_names", None) or ())
    return names


async def serve_permitted(
    ctx: RequestContext, request: Any, handler: Handler, denied: set[str], code: ErrorCode
) -> Any:
    """Serve the permitted topics and answer each denied one's entries with `code`."""
    if not denied:
        return await handler(ctx, request)
    permitted, refused, left = split_topics(ctx, request, denied)
    injected = error_response(ctx, refused, code)
    if not left:
        return injected
    served = await handler(ctx, permitted)
    return injected if served is None else merge_responses(served, injected)


def per_topic(operation: AclOperation) -> Rule:
    """Each topic needs `operation`; denied ones get TOPIC_AUTHORIZATION_FAILED."""

    async def rule(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
        denied = {t for t in requested_topics(ctx, request) if not check(operation, RT.TOPIC, t)}
        return await serve_permitted(ctx, request, handler, denied, TOPIC_DENIED)

    return rule
