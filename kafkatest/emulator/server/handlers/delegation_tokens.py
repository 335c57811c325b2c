"""Delegation tokens (KIP-48): Create, Renew, Expire and Describe, as Kafka 4.1 answers them.

Tokens are on when the broker has a secret (``delegation.token.secret.key``; the
harness sets one whenever a SCRAM mechanism is enabled) and the rules are the
controller's (`state.delegation_tokens`). The broker's own checks come first, as
in KafkaApis; their answers were captured from the `kafka` backend:

- a connection that may not ask for tokens at all (PLAINTEXT, TLS without a
  client certificate, or one that logged in with a token) gets
  DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, from the broker, with -1 for every
  timestamp;
- CreateDelegationToken then checks the renewers' principal type
  (INVALID_PRINCIPAL_TYPE), and, with ACLs, CREATE_TOKENS on another owner (the
  ACL rule asks that);
- without a secret the controller answers DELEGATION_TOKEN_AUTH_DISABLED, with 0.
"""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.responses import datetime_at_ms, make, respond, response_types
from kafkatest.emulator.server.security import token_requests_allowed
from kafkatest.emulator.state.delegation_tokens import DelegationToken

#: The timestamps the broker writes when it refuses a token request itself.
BROKER_REFUSED_MS = -1
#: The timestamps the controller writes when tokens are disabled.
_CONTROLLER_REFUSED_MS = 0
USER_TYPE = "User"


def _refusal(ctx: RequestContext) -> tuple[ErrorCode, int] | None:
    """The broker's or a disabled controller's refusal, else None (served)."""
    if not token_requests_allowed(ctx.security_protocol, ctx.principal):
        return ErrorCode.delegation_token_request_not_allowed, BROKER_REFUSED_MS
    if not ctx.state.delegation_tokens.enabled:
        return ErrorCode.delegation_token_auth_disabled, _CONTROLLER_REFUSED_MS
    return None


def _ms(period: datetime.timedelta) -> int:
    return int(period / datetime.timedelta(milliseconds=1))


def split_principal(principal: str) -> tuple[str, str]:
    """ "User:alice" -> ("User", "alice")."""
    kind, _, name = principal.partition(":")
    return kind, name


def token_owner(ctx: RequestContext, request: Any) -> tuple[str, str]:
    """The owner a CreateDelegationToken names, else the requester (as Kafka)."""
    name = getattr(request, "owner_principal_name", None)
    if name:
        return request.owner_principal_type or "", name
    return split_principal(ctx.principal)


@handles(38, 1, 3)
async def create_delegation_token(ctx: RequestContext, request: Any) -> Any:
    refusal = _refusal(ctx)
    broker_refused = refusal is not None and refusal[1] == BROKER_REFUSED_MS
    if not broker_refused and any(r.principal_type != USER_TYPE for r in request.renewers):
        # The broker checks the renewers before it asks the controller.
        refusal = ErrorCode.invalid_principal_type, BROKER_REFUSED_MS
    if refusal is not None:
        return create_token_answer(ctx, request, *refusal)
    owner = ":".join(token_owner(ctx, request))
    token = ctx.state.delegation_tokens.create(
        owner,
        ctx.principal,
        (f"{r.principal_type}:{r.principal_name}" for r in request.renewers),
        _ms(request.max_lifetime),
    )
    answer = create_token_answer(ctx, request, ErrorCode.none, token.issue_ms)
    return dataclasses.replace(
        answer,
        expiry_timestamp=datetime_at_ms(token.expiry_ms),
        max_timestamp=datetime_at_ms(token.max_ms),
        token_id=token.token_id,
        hmac=token.hmac,
    )


def create_token_answer(ctx: RequestContext, request: Any, error: ErrorCode, at_ms: int) -> Any:
    owner_type, owner_name = token_owner(ctx, request)
    requester_type, requester_name = split_principal(ctx.principal)
    when = datetime_at_ms(at_ms)
    return respond(
        response_types(ctx).CreateDelegationTokenResponse,
        error,
        principal_type=owner_type,
        principal_name=owner_name,
        token_requester_principal_type=requester_type,
        token_requester_principal_name=requester_name,
        issue_timestamp=when,
        expiry_timestamp=when,
        max_timestamp=when,
        token_id="",
        hmac=b"",
    )


@handles(39, 1, 2)
@handles(40, 1, 2)
async def renew_or_expire_delegation_token(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    renew = ctx.api_key == 39
    refusal = _refusal(ctx)
    if refusal is not None:
        error, at_ms = refusal
    else:
        tokens = ctx.state.delegation_tokens
        if renew:
            name, at_ms = tokens.renew(request.hmac, ctx.principal, _ms(request.renew_period))
        else:
            period = _ms(request.expiry_time_period)
            name, at_ms = tokens.expire(request.hmac, ctx.principal, period)
        error = ErrorCode[name]
    return respond(
        types.RenewDelegationTokenResponse if renew else types.ExpireDelegationTokenResponse,
        error,
        expiry_timestamp=datetime_at_ms(at_ms),
    )


@handles(41, 1, 3)
async def describe_delegation_token(ctx: RequestContext, request: Any) -> Any:
    """Every token of the owners asked for (a null list: every token; an empty
    one: none). With ACLs, the rule then keeps those the requester may see."""
    refusal = _refusal(ctx)
    types = response_types(ctx)
    tokens: tuple[Any, ...] = ()
    if refusal is None and request.owners != ():
        owners = (
            None
            if request.owners is None
            else [f"{o.principal_type}:{o.principal_name}" for o in request.owners]
        )
        tokens = tuple(
            _described(types, token) for token in ctx.state.delegation_tokens.tokens(owners)
        )
    return respond(
        types.DescribeDelegationTokenResponse,
        ErrorCode.none if refusal is None else refusal[0],
        tokens=tokens,
    )


def _described(types: Any, token: DelegationToken) -> Any:
    owner_type, owner_name = split_principal(token.owner)
    requester_type, requester_name = split_principal(token.requester)
    return make(
        types.DescribedDelegationToken,
        principal_type=owner_type,
        principal_name=owner_name,
        token_requester_principal_type=requester_type,
        token_requester_principal_name=requester_name,
        # Plain milliseconds here (kio's i64), where the other answers have times.
        issue_timestamp=token.issue_ms,
        expiry_timestamp=token.expiry_ms,
        max_timestamp=token.max_ms,
        token_id=token.token_id,
        hmac=token.hmac,
        renewers=tuple(
            make(
                types.DescribedDelegationTokenRenewer,
                principal_type=split_principal(r)[0],
                principal_name=split_principal(r)[1],
            )
            for r in token.renewers
        ),
    )
