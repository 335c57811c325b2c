"""What a handler knows about the request it is answering."""

from __future__ import annotations

from dataclasses import dataclass

from kafkatest.emulator.state import EmulatorState


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
