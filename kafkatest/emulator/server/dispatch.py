"""From one request frame to one response frame (or none).

Decides what happens with requests that cannot be answered normally: an
ApiVersions at an unknown version gets Kafka's v0-layout UNSUPPORTED_VERSION
reply, while an unknown API key, an unadvertised version or an undecodable body
closes that one connection, as Kafka does.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from kio.schema.errors import ErrorCode
from kio.static.primitive import i16

from kafkatest.emulator.protocol.headers import (
    API_VERSIONS_KEY,
    parse_request_header,
    peek_correlation,
    response_header,
)
from kafkatest.emulator.protocol.messages import (
    decode_request,
    request_schema,
)
from kafkatest.emulator.protocol.primitives import DecodeError
from kafkatest.emulator.protocol.replies import Reply, encode_reply
from kafkatest.emulator.protocol.request_rules import parse_refusal
from kafkatest.emulator.server.authorization import authorized_call
from kafkatest.emulator.server.context import ANONYMOUS, RequestContext
from kafkatest.emulator.server.faults import FaultHook, Handler
from kafkatest.emulator.server.handlers import ApiHandler, load_handlers
from kafkatest.emulator.server.inbox import ClientInbox
from kafkatest.emulator.state import EmulatorState
from kafkatest.emulator.state.acls import Authorizer
from kafkatest.emulator.state.cluster import CLIENT_LISTENER
from kafkatest.emulator.state.credentials import CredentialStore
from kafkatest.emulator.state.fetch_sessions import FetchSessionCache

log = logging.getLogger("kafkatest.emulator")


class CloseConnection(Exception):
    """The request cannot be answered; the message says why (it is logged)."""


@dataclass(eq=False)
class Dispatcher:
    """One broker's requests on one listener (each listener has its own, with its
    own logins), each handed to its API's handler."""

    state: EmulatorState
    broker_id: int
    faults: FaultHook
    security_protocol: str = "PLAINTEXT"
    #: The listener's name: its answers give the brokers' addresses on it.
    listener: str = CLIENT_LISTENER
    _credentials: CredentialStore | None = None
    handlers: dict[int, ApiHandler] = field(init=False, default_factory=load_handlers)
    fetch_sessions: FetchSessionCache = field(init=False, default_factory=FetchSessionCache)

    @property
    def credentials(self) -> CredentialStore:
        """Who may log in on this listener. Kafka keeps PLAIN users in each listener's
        JAAS entry: kafkatest's own listener has its login alone, which the clients'
        listener does not accept; the others share the cluster's users."""
        if self._credentials is not None:
            return self._credentials
        return self.state.credentials

    async def handle(
        self,
        request_frame: bytes,
        peer: str,
        connection_id: int,
        principal: str = ANONYMOUS,
        inbox: ClientInbox | None = None,
    ) -> Reply | None:
        """The framed response to `request_frame`, or None when nothing is sent back."""
        try:
            api_key, version, correlation_id = peek_correlation(request_frame)
        except DecodeError as exc:
            raise CloseConnection(f"malformed request header: {exc}") from exc
        spec = self.handlers.get(api_key)
        if spec is None:
            raise CloseConnection(f"unknown API key {api_key} (version {version})")
        if not spec.supports(version):
            if api_key == API_VERSIONS_KEY:
                return self._unsupported_api_versions(correlation_id)
            raise CloseConnection(
                f"API key {api_key} version {version} is not supported "
                f"(advertised {spec.min_version}-{spec.max_version})"
            )
        schema = request_schema(api_key, version)
        if schema is None:
            raise CloseConnection(f"no schema for API key {api_key} version {version}")
        try:
            header = parse_request_header(request_frame, schema.__flexible__)
            request = decode_request(schema, request_frame, header.body_offset)
        except DecodeError as exc:
            raise CloseConnection(f"malformed request (API {api_key} v{version}): {exc}") from exc
        refusal = parse_refusal(api_key, request)
        if refusal is not None:
            raise CloseConnection(f"invalid request (API {api_key} v{version}): {refusal}")
        acls = self.state.acls
        ctx = RequestContext(
            state=self.state,
            broker_id=self.broker_id,
            api_key=api_key,
            api_version=version,
            correlation_id=correlation_id,
            client_id=header.client_id,
            peer=peer,
            connection_id=connection_id,
            principal=principal,
            security_protocol=self.security_protocol,
            listener=self.listener,
            fetch_sessions=self.fetch_sessions,
            inbox=inbox,
        )
        handler = spec.handler
        if acls is not None:
            handler = _authorized(acls, handler)
        decision = await self.faults.before_dispatch(ctx, request)
        if decision is not None:
            if decision.close_connection:
                raise CloseConnection("closed by fault injection")
            if decision.handler is not None:
                handler = decision.handler
        try:
            response = await handler(ctx, request)
        except Exception as exc:
            log.exception("handler for API %s v%s failed", api_key, version)
            raise CloseConnection(f"handler for API {api_key} v{version} failed: {exc}") from exc
        if decision is not None and decision.on_response is not None:
            decision.on_response(response)
        if decision is not None and decision.drop_response:
            raise CloseConnection("response dropped by fault injection")
        if response is None:
            return None
        try:
            return self._frame_response(correlation_id, api_key, response)
        except Exception as exc:
            # A response the codec cannot write is the emulator's bug: it costs this
            # connection, with a log line naming the API.
            log.exception("encoding the answer to API %s v%s failed", api_key, version)
            raise CloseConnection(
                f"the answer to API {api_key} v{version} could not be encoded: {exc}"
            ) from exc

    @staticmethod
    def _frame_response(correlation_id: int, api_key: int, response: Any) -> Reply:
        flexible_header = api_key != API_VERSIONS_KEY and response.__flexible__
        return encode_reply(response_header(correlation_id, flexible_header), response)

    def _unsupported_api_versions(self, correlation_id: int) -> Reply:
        """KIP-511: answer in the v0 layout so the client can retry at our max version."""
        from kio.schema.api_versions.v0.response import ApiVersion, ApiVersionsResponse

        response = ApiVersionsResponse(
            error_code=ErrorCode.unsupported_version,
            api_keys=tuple(
                ApiVersion(
                    api_key=i16(s.api_key),
                    min_version=i16(s.advertised_min_version),
                    max_version=i16(s.max_version),
                )
                for s in sorted(self.handlers.values(), key=lambda s: s.api_key)
            ),
        )
        return encode_reply(response_header(correlation_id, False), response)


def _authorized(acls: Authorizer, handler: Handler) -> Handler:
    async def checked(ctx: RequestContext, request: Any) -> Any:
        return await authorized_call(acls, ctx, request, handler)

    return checked
