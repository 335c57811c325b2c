"""A SASL listener's connection before it is authenticated (KIP-43, KIP-152).

Kafka's SaslServerAuthenticator, frame by frame: before authentication only one
ApiVersions (before the handshake) and SaslHandshake are served; any other
request closes the connection unanswered. SaslHandshake v0 switches to raw
size-prefixed SASL tokens, v1 to tokens inside SaslAuthenticate. A failed
authentication is answered with SASL_AUTHENTICATION_FAILED and Kafka's message
and then closed, so a client with a wrong password fails at once instead of
waiting for a time-out. Handlers never see an unauthenticated request.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.protocol.headers import (
    API_VERSIONS_KEY,
    parse_request_header,
    peek_correlation,
)
from kafkatest.emulator.protocol.messages import decode_request, request_schema
from kafkatest.emulator.protocol.primitives import DecodeError
from kafkatest.emulator.protocol.replies import Reply
from kafkatest.emulator.server.context import RequestContext, TokenPrincipal
from kafkatest.emulator.server.dispatch import CloseConnection, Dispatcher
from kafkatest.emulator.server.responses import respond, response_types
from kafkatest.emulator.server.sasl_mechanisms import (
    MalformedToken,
    SaslAuthenticationError,
    SaslError,
    SaslMechanismServer,
    mechanism_server,
)
from kafkatest.emulator.state.credentials import CredentialStore

log = logging.getLogger("kafkatest.emulator")

SASL_HANDSHAKE_KEY = 17
SASL_AUTHENTICATE_KEY = 36
#: Kafka's ``sasl.server.max.receive.size``: the largest frame before authentication.
SASL_MAX_RECEIVE_BYTES = 524288


def _api_name(api_key: int) -> str:
    """Kafka's ApiKeys name (e.g. DESCRIBE_CLUSTER), as its messages print it."""
    from kio.index import api_key_map

    name = dict(api_key_map).get(api_key)
    return name.upper() if name else str(api_key)


class AuthenticationFailed(Exception):
    """Send `reply` (if any), then close: the client learns why at once."""

    def __init__(self, reply: Reply | None, reason: str) -> None:
        super().__init__(reason)
        self.reply = reply


@dataclasses.dataclass(eq=False)
class SaslAuthenticator:
    """One connection's exchange, from its first frame until it is authenticated."""

    _mechanisms: tuple[str, ...]
    _credentials: CredentialStore
    _dispatcher: Dispatcher
    _peer: str
    _connection_id: int
    _versions_allowed: bool = dataclasses.field(init=False, default=True)
    _server: SaslMechanismServer | None = dataclasses.field(init=False, default=None)
    _mechanism: str = dataclasses.field(init=False, default="")
    #: Tokens travel inside SaslAuthenticate (handshake v1) or raw (v0).
    _kafka_headers: bool = dataclasses.field(init=False, default=False)
    #: "User:<name>" once authenticated.
    principal: str | None = dataclasses.field(init=False, default=None)

    async def on_frame(self, frame: bytes) -> Reply | None:
        """The reply to one frame; raises CloseConnection or AuthenticationFailed."""
        if self._server is None:
            return await self._handshake_phase(frame)
        if self._kafka_headers:
            return self._authenticate_request(frame)
        return self._raw_token(frame)

    # -- before the handshake --------------------------------------------------------

    async def _handshake_phase(self, frame: bytes) -> Reply | None:
        try:
            api_key, version, correlation_id = peek_correlation(frame)
        except DecodeError as exc:
            raise CloseConnection(
                "Invalid request, potential reasons: kafka client configured with the wrong "
                "security protocol, it does not support KIP-43 or it is not a kafka client."
            ) from exc
        if api_key == API_VERSIONS_KEY:
            if not self._versions_allowed:
                raise CloseConnection(
                    "Unexpected ApiVersions request received during SASL authentication"
                )
            reply = await self._dispatcher.handle(frame, self._peer, self._connection_id)
            spec = self._dispatcher.handlers[API_VERSIONS_KEY]
            # An unsupported version is answered and may be retried at another one.
            self._versions_allowed = not spec.supports(version)
            return reply
        if api_key != SASL_HANDSHAKE_KEY:
            raise CloseConnection(
                f"Unexpected Kafka request of type {_api_name(api_key)} during SASL handshake."
            )
        ctx, request = self._decode(frame, api_key, version, correlation_id)
        types = response_types(ctx)
        mechanisms = tuple(self._mechanisms)
        if request.mechanism not in self._mechanisms:
            reply = self._frame(
                ctx,
                respond(
                    types.SaslHandshakeResponse,
                    ErrorCode.unsupported_sasl_mechanism,
                    mechanisms=mechanisms,
                ),
            )
            raise AuthenticationFailed(reply, f"Unsupported SASL mechanism {request.mechanism}")
        self._versions_allowed = False
        self._kafka_headers = version >= 1
        self._mechanism = request.mechanism
        self._server = mechanism_server(request.mechanism, self._credentials)
        return self._frame(
            ctx,
            respond(types.SaslHandshakeResponse, mechanisms=mechanisms),
        )

    # -- the exchange ------------------------------------------------------------------

    def _authenticate_request(self, frame: bytes) -> Reply | None:
        assert self._server is not None
        try:
            api_key, version, correlation_id = peek_correlation(frame)
        except DecodeError as exc:
            raise CloseConnection(f"malformed request during SASL authentication: {exc}") from exc
        ctx, request = self._decode(frame, api_key, version, correlation_id)
        if api_key != SASL_AUTHENTICATE_KEY:
            from kafkatest.emulator.protocol.error_responses import error_response

            reason = (
                f"Unexpected Kafka request of type {_api_name(api_key)} during SASL authentication."
            )
            response = error_response(ctx, request, ErrorCode.illegal_sasl_state)
            if "error_message" in {f.name for f in dataclasses.fields(response)}:
                # Kafka's getErrorResponse carries the exception's message where it can.
                response = dataclasses.replace(response, error_message=reason)
            reply = self._frame(ctx, response)
            raise AuthenticationFailed(reply, reason)
        types = response_types(ctx)
        try:
            answer = self._server.evaluate(bytes(request.auth_bytes))
        except SaslError as exc:
            message = (
                str(exc)
                if isinstance(exc, SaslAuthenticationError)
                else "Authentication failed during authentication due to invalid credentials "
                f"with SASL mechanism {self._mechanism}"
            )
            reply = self._frame(
                ctx,
                respond(
                    types.SaslAuthenticateResponse,
                    ErrorCode.sasl_authentication_failed,
                    message,
                    auth_bytes=b"",
                    session_lifetime=datetime.timedelta(0),
                ),
            )
            raise AuthenticationFailed(reply, f"{message} ({exc})") from exc
        except MalformedToken as exc:
            raise CloseConnection(str(exc)) from exc
        self._maybe_complete()
        return self._frame(
            ctx,
            respond(
                types.SaslAuthenticateResponse,
                ErrorCode.none,
                "",
                auth_bytes=answer,
                session_lifetime=datetime.timedelta(0),
            ),
        )

    def _raw_token(self, frame: bytes) -> Reply | None:
        """Handshake v0: the frame is the token, the answer a size-prefixed token."""
        assert self._server is not None
        try:
            answer = self._server.evaluate(frame)
        except (SaslError, MalformedToken) as exc:
            # No Kafka response can carry the error in this mode: Kafka just closes.
            raise AuthenticationFailed(None, str(exc)) from exc
        self._maybe_complete()
        return [_size_prefixed(answer)]

    def _maybe_complete(self) -> None:
        assert self._server is not None
        if self._server.complete:
            name = f"User:{self._server.authorization_id}"
            self.principal = TokenPrincipal(name) if self._server.token_authenticated else name

    # -- helpers -----------------------------------------------------------------------

    def _decode(
        self, frame: bytes, api_key: int, version: int, correlation_id: int
    ) -> tuple[RequestContext, Any]:
        spec = self._dispatcher.handlers.get(api_key)
        schema = request_schema(api_key, version)
        if spec is None or not spec.supports(version) or schema is None:
            raise CloseConnection(
                f"Version {version} is not supported for API key {api_key} during SASL"
            )
        try:
            header = parse_request_header(frame, schema.__flexible__)
            request = decode_request(schema, frame, header.body_offset)
        except DecodeError as exc:
            raise CloseConnection(
                f"malformed request (API {api_key} v{version}) during SASL: {exc}"
            ) from exc
        ctx = RequestContext(
            state=self._dispatcher.state,
            broker_id=self._dispatcher.broker_id,
            api_key=api_key,
            api_version=version,
            correlation_id=correlation_id,
            client_id=header.client_id,
            peer=self._peer,
            connection_id=self._connection_id,
        )
        return ctx, request

    @staticmethod
    def _frame(ctx: RequestContext, response: Any) -> Reply:
        return Dispatcher._frame_response(ctx.correlation_id, ctx.api_key, response)


def _size_prefixed(token: bytes) -> bytes:
    return len(token).to_bytes(4, "big") + token
