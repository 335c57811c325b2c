"""What a handler knows about the request it is answering."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kafkatest.emulator.state import EmulatorState
from kafkatest.emulator.state.cluster import CLIENT_LISTENER
from kafkatest.emulator.state.fetch_sessions import FetchSessionCache

if TYPE_CHECKING:
    from kafkatest.emulator.server.inbox import ClientInbox

#: Kafka's principal for a connection that did not authenticate (PLAINTEXT, or SSL
#: without a client certificate).
ANONYMOUS = "User:ANONYMOUS"


class TokenPrincipal(str):
    """A principal that logged in with a delegation token ("User:<owner>").

    Kafka marks the principal itself (KafkaPrincipal.tokenAuthenticated), and so
    does the emulator: it compares, prints and authorizes as the plain string, and
    only the delegation-token APIs ask (a token may not be used to get tokens).
    """

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class RequestContext:
    state: EmulatorState
    #: The emulated broker whose listener received the request.
    broker_id: int
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    #: "host:port" of the client, for logs.
    peer: str
    connection_id: int
    #: Who the connection authenticated as, in Kafka's "User:<name>" form: the SASL
    #: user, the client certificate's DN on mutual TLS, else "User:ANONYMOUS".
    #: Authorization reads it; it never changes on a connection.
    principal: str = ANONYMOUS
    #: The listener's security.protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL).
    security_protocol: str = "PLAINTEXT"
    #: The name of the listener the request came in on: addresses in the answer
    #: (Metadata, DescribeCluster, FindCoordinator) are that listener's.
    listener: str = CLIENT_LISTENER
    #: The receiving broker's fetch sessions (KIP-227); each broker has its own.
    fetch_sessions: FetchSessionCache = field(default_factory=FetchSessionCache)
    #: What the client sent behind this request (None outside a client connection):
    #: a parked Fetch answers once there is something (see `inbox`).
    inbox: ClientInbox | None = None
    #: With ACLs on, whether the principal may see a topic (DESCRIBE), for the state
    #: that decides by it (a KIP-848 regex's topics); set by the authorization layer.
    topic_visible: Callable[[str], bool] | None = None
