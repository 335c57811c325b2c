"""Rules for the cluster administration APIs: features, log dirs, the controller's
voters and broker registrations, delegation tokens.

Each needs ALTER on the cluster, as Kafka 4.1 checks it; the denials' shapes and
texts are what the `kafka` backend answered (tests/emulator/test_cluster_admin_wire.py).
The APIs Kafka forwards to its controller deny with the controller's text, which
names the request; the others with "Cluster authorization failed.".
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.authorization.core import (
    CLUSTER_DENIED,
    NARROWERS,
    RT,
    Check,
    Op,
    rule,
)
from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.faults import Handler
from kafkatest.emulator.server.handlers.delegation_tokens import (
    BROKER_REFUSED_MS,
    create_token_answer,
    split_principal,
    token_owner,
)
from kafkatest.emulator.server.responses import make, respond, response_types
from kafkatest.emulator.server.security import token_requests_allowed

#: Kafka's text when a broker's own handler denies (AddRaftVoter, RemoveRaftVoter).
_DENIED = "Cluster authorization failed."

_WHOLE_RESPONSES = {
    57: "UpdateFeaturesResponse",
    64: "UnregisterBrokerResponse",
    80: "AddRaftVoterResponse",
    81: "RemoveRaftVoterResponse",
}


def controller_denial(ctx: RequestContext) -> str:
    """The controller's text for a forwarded request without ALTER on the cluster
    (Kafka prints its Request object there; the emulator names the connection)."""
    return (
        f"Request Request(connectionId={ctx.peer}-{ctx.connection_id}, "
        f"securityProtocol={ctx.security_protocol}, principal={ctx.principal}) "
        "needs ALTER permission."
    )


@rule(57, 64, 80, 81)
async def _alter_cluster(check: Check, ctx: RequestContext, request: Any, handler: Handler) -> Any:
    """ALTER on the cluster, else the whole request is refused."""
    if check.cluster(Op.ALTER):
        return await handler(ctx, request)
    message = _DENIED if ctx.api_key in (80, 81) else controller_denial(ctx)
    return respond(
        getattr(response_types(ctx), _WHOLE_RESPONSES[ctx.api_key]),
        CLUSTER_DENIED,
        message,
        results=(),
    )


@rule(34)
async def _alter_replica_log_dirs(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """ALTER on the cluster, else every partition gets CLUSTER_AUTHORIZATION_FAILED."""
    if check.cluster(Op.ALTER):
        return await handler(ctx, request)
    types = response_types(ctx)
    partitions: dict[str, dict[int, None]] = {}
    for wanted in request.dirs:
        for topic in wanted.topics:
            partitions.setdefault(topic.name, {}).update(dict.fromkeys(topic.partitions))
    results = tuple(
        make(
            types.AlterReplicaLogDirTopicResult,
            topic_name=name,
            partitions=tuple(
                respond(
                    types.AlterReplicaLogDirPartitionResult, CLUSTER_DENIED, partition_index=index
                )
                for index in indexes
            ),
        )
        for name, indexes in partitions.items()
    )
    return respond(types.AlterReplicaLogDirsResponse, results=results)


@rule(38)
async def _create_delegation_token(
    check: Check, ctx: RequestContext, request: Any, handler: Handler
) -> Any:
    """A token for another owner needs CREATE_TOKENS on that user; Kafka asks only
    once the connection may ask for tokens at all."""
    owner = token_owner(ctx, request)
    if (
        token_requests_allowed(ctx.security_protocol, ctx.principal)
        and owner != split_principal(ctx.principal)
        and not check(Op.CREATE_TOKENS, RT.USER, ":".join(owner))
    ):
        return create_token_answer(
            ctx, request, ErrorCode.delegation_token_authorization_failed, BROKER_REFUSED_MS
        )
    return await handler(ctx, request)


def _may_describe(check: Check, token: Any) -> bool:
    """DelegationTokenManager.filterToken: owners and renewers see their tokens;
    anyone else needs DESCRIBE on the token or DESCRIBE_TOKENS on its owner."""
    owner = f"{token.principal_type}:{token.principal_name}"
    renewers = {f"{r.principal_type}:{r.principal_name}" for r in token.renewers}
    if check.principal == owner or check.principal in renewers:
        return True
    return check(Op.DESCRIBE, RT.DELEGATION_TOKEN, token.token_id) or check(
        Op.DESCRIBE_TOKENS, RT.USER, owner
    )


def _visible_tokens(check: Check, response: Any) -> Any:
    tokens = tuple(token for token in response.tokens if _may_describe(check, token))
    return dataclasses.replace(response, tokens=tokens)


NARROWERS[41] = _visible_tokens
