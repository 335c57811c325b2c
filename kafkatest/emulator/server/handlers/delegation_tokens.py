"""Delegation tokens (KIP-48), answered as a Kafka 4.1 broker without a token secret.

Kafka enables tokens only when ``delegation.token.secret.key`` is set, which a
default broker (and kafkatest's `kafka` backend) does not set. Its answers then
depend on who asks, and were captured from the `kafka` backend:

- a connection that may not ask for tokens at all (PLAINTEXT, or TLS without a
  client certificate) gets DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, from the broker,
  with -1 for every timestamp;
- any other gets DELEGATION_TOKEN_AUTH_DISABLED, from the controller, with 0;
- CreateDelegationToken first checks the renewers' principal type
  (INVALID_PRINCIPAL_TYPE), and, with ACLs, CREATE_TOKENS on another owner (the
  ACL rule asks that).
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.responses import NO_THROTTLE, datetime_at_ms, make, response_types
from kafkatest.emulator.server.security import token_requests_allowed

#: The timestamps the broker writes when it refuses a token request itself.
BROKER_REFUSED_MS = -1
#: The timestamps the controller writes when tokens are disabled.
_CONTROLLER_REFUSED_MS = 0
USER_TYPE = "User"


def _refusal(ctx: RequestContext) -> tuple[ErrorCode, int]:
    if not token_requests_allowed(ctx.security_protocol, ctx.principal):
        return ErrorCode.delegation_token_request_not_allowed, BROKER_REFUSED_MS
    return ErrorCode.delegation_token_auth_disabled, _CONTROLLER_REFUSED_MS


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
    error, at_ms = _refusal(ctx)
    if error == ErrorCode.delegation_token_auth_disabled and any(
        r.principal_type != USER_TYPE for r in request.renewers
    ):
        error, at_ms = ErrorCode.invalid_principal_type, BROKER_REFUSED_MS
    return create_token_answer(ctx, request, error, at_ms)


def create_token_answer(ctx: RequestContext, request: Any, error: ErrorCode, at_ms: int) -> Any:
    owner_type, owner_name = token_owner(ctx, request)
    requester_type, requester_name = split_principal(ctx.principal)
    when = datetime_at_ms(at_ms)
    return make(
        response_types(ctx).CreateDelegationTokenResponse,
        error_code=error,
        principal_type=owner_type,
        principal_name=owner_name,
        token_requester_principal_type=requester_type,
        token_requester_principal_name=requester_name,
        issue_timestamp=when,
        expiry_timestamp=when,
        max_timestamp=when,
        token_id="",
        hmac=b"",
        throttle_time=NO_THROTTLE,
    )


@handles(39, 1, 2)
@handles(40, 1, 2)
async def renew_or_expire_delegation_token(ctx: RequestContext, request: Any) -> Any:
    error, at_ms = _refusal(ctx)
    types = response_types(ctx)
    response = (
        types.RenewDelegationTokenResponse
        if ctx.api_key == 39
        else types.ExpireDelegationTokenResponse
    )
    return make(
        response,
        error_code=error,
        expiry_timestamp=datetime_at_ms(at_ms),
        throttle_time=NO_THROTTLE,
    )


@handles(41, 1, 3)
async def describe_delegation_token(ctx: RequestContext, request: Any) -> Any:
    error, _ = _refusal(ctx)
    return make(
        response_types(ctx).DescribeDelegationTokenResponse,
        error_code=error,
        tokens=(),
        throttle_time=NO_THROTTLE,
    )
