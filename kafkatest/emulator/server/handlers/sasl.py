"""SaslHandshake and SaslAuthenticate once a connection is past authentication.

On a SASL listener the exchange itself never reaches a handler (the connection
runs it, see `server/sasl.py`); what arrives here is a handshake on a PLAINTEXT or
SSL listener, or a second one after authentication, which Kafka's KafkaApis
answers with ILLEGAL_SASL_STATE (re-authentication is off, as by Kafka's default
``connections.max.reauth.ms=0``).
"""

from __future__ import annotations

import datetime
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.responses import respond, response_types


@handles(17, 0, 1)
async def sasl_handshake(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    return respond(types.SaslHandshakeResponse, ErrorCode.illegal_sasl_state, mechanisms=())


@handles(36, 0, 2)
async def sasl_authenticate(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    return respond(
        types.SaslAuthenticateResponse,
        ErrorCode.illegal_sasl_state,
        "SaslAuthenticate request received after successful authentication",
        auth_bytes=b"",
        session_lifetime=datetime.timedelta(0),
    )
