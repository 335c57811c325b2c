"""The single point where fault injection can intercept requests.

Every decoded request passes `FaultHook.before_dispatch` before its handler runs.
The default hook lets everything through; a fault-injection layer replaces it to
drop connections, answer with its own handler (errors, delays) or lose the
response after the handler ran, per API key,
version or client, without the server or handlers knowing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kafkatest.emulator.server.context import RequestContext

Handler = Callable[[RequestContext, Any], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class FaultDecision:
    """How to treat one request instead of the normal path."""

    #: Close the client's connection without answering.
    close_connection: bool = False
    #: Answer with this handler instead of the registered one (same contract).
    handler: Handler | None = None
    #: Run the handler (its effects stay) but close the connection instead of
    #: answering: a response lost on the way back, e.g. a produce acknowledgement.
    drop_response: bool = False
    #: Called with the handler's answer before it is sent (the request log's view).
    on_response: Callable[[Any], None] | None = None


class FaultHook(Protocol):
    async def before_dispatch(self, ctx: RequestContext, request: Any) -> FaultDecision | None:
        """None lets the request through unchanged."""
        ...


class NoFaults:
    """The default hook: every request goes to its handler."""

    async def before_dispatch(self, ctx: RequestContext, request: Any) -> FaultDecision | None:
        return None
