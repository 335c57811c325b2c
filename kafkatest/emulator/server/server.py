"""Listeners for every emulated broker id, all backed by one shared state.

Stopping closes listeners and every open connection but keeps the state, so a
restart looks to clients like a broker outage with no data loss. Ports are kept
across restarts so that clients reconnect to the addresses they know. One broker
of several can be stopped alone (`stop_broker`): its listeners and connections go,
as a broker process would.

With a `HarnessListener`, every broker also listens on loopback for kafkatest's own
clients, who log in there over SASL/PLAIN as a super user: the same way in as the
`kafka` backend's KAFKATEST listener, so nothing a client sends in clear (its
client id, say) can make it the harness.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import ssl as ssl_module
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from kafkatest.emulator.protocol.framing import DEFAULT_MAX_FRAME_BYTES
from kafkatest.emulator.server.connection import serve_connection
from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.dispatch import Dispatcher
from kafkatest.emulator.server.faults import FaultDecision, FaultHook, NoFaults
from kafkatest.emulator.server.inbox import NotifyingStreamReader
from kafkatest.emulator.server.request_log import RequestLog
from kafkatest.emulator.server.security import ListenerSecurity
from kafkatest.emulator.server.timings import RequestTimings
from kafkatest.emulator.state import EmulatorState
from kafkatest.emulator.state.cluster import CLIENT_LISTENER
from kafkatest.emulator.state.credentials import CredentialStore

log = logging.getLogger("kafkatest.emulator")


#: The harness listener's name, as the `kafka` backend names its own.
HARNESS_LISTENER = "KAFKATEST"
_HARNESS_SECURITY = ListenerSecurity("SASL_PLAINTEXT", ("PLAIN",))


@dataclass(frozen=True)
class HarnessListener:
    """kafkatest's own listener on every broker: SASL/PLAIN on loopback, where only
    `user` may log in, with `password` (the broker's owner makes it up and keeps it).

    Loopback whatever the clients' host is: only the process running the emulator
    ever connects here, and a standalone emulator served on a public address does
    not offer its super user's door to the network.
    """

    user: str
    password: str = field(repr=False)
    host: str = "127.0.0.1"

    def credentials(self) -> CredentialStore:
        """The listener's JAAS list: its one user, for PLAIN only."""
        store = CredentialStore()
        store.set_plain(self.user, self.password)
        return store


class EmulatorServer:
    def __init__(
        self,
        state: EmulatorState,
        host: str = "127.0.0.1",
        first_port: int = 0,
        faults: FaultHook | None = None,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        security: ListenerSecurity | None = None,
        harness: HarnessListener | None = None,
    ) -> None:
        self.state = state
        #: None (PLAINTEXT) keeps the request loop free of any security step.
        self.security = (
            security if security is not None and security.protocol != "PLAINTEXT" else None
        )
        self.host = host
        self.faults: FaultHook = faults or NoFaults()
        self.max_frame_bytes = max_frame_bytes
        #: Port per broker id; 0 until first bound when ports are chosen by the OS.
        self.ports: dict[int, int] = {
            broker_id: (first_port + i if first_port else 0)
            for i, broker_id in enumerate(state.cluster.broker_ids)
        }
        self.harness = harness
        #: The harness listener's port per broker id; chosen by the OS, then kept.
        self.harness_ports: dict[int, int] = dict.fromkeys(self.ports, 0) if harness else {}
        #: Per-request phase timings, when asked for (`RequestTimings`); None costs nothing.
        self.timings: RequestTimings | None = None
        #: Every request and its answer's errors, when asked for; None costs nothing.
        self.request_log: RequestLog | None = None
        #: Requests dispatched so far, on every listener: idle-time work (the runner's
        #: `load_schemas_when_idle`) waits until it stands still.
        self.requests_seen = 0
        #: Each running broker's listeners: the clients' first, then the harness's.
        self._servers: dict[int, list[asyncio.Server]] = {}
        #: Open connections per broker id.
        self._connections: dict[int, set[asyncio.Task[None]]] = {}
        self._connection_ids = itertools.count(1)

    @property
    def running(self) -> bool:
        return bool(self._servers)

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{self.host}:{port}" for port in self.ports.values())

    @property
    def harness_bootstrap_servers(self) -> str:
        """Where kafkatest's own clients connect: every broker's harness listener."""
        if self.harness is None:
            raise ValueError("this emulator has no harness listener")
        return ",".join(f"{self.harness.host}:{port}" for port in self.harness_ports.values())

    async def start(self) -> None:
        if self._servers:
            return
        try:
            for broker_id in self.ports:
                if broker_id not in self.state.cluster.stopped:
                    await self.start_broker(broker_id)
        except BaseException:
            await self.stop()
            raise

    async def start_broker(self, broker_id: int) -> None:
        """Listen for one broker id (on its earlier ports, if it had them).

        Every listener is bound before any address is published, so no answer names
        a listener of this broker that is not yet there."""
        if broker_id in self._servers:
            return
        servers: list[asyncio.Server] = []
        try:
            await self._listen(broker_id, servers)
        except BaseException:
            for server in servers:
                server.close()
            raise
        self._servers[broker_id] = servers

    async def _listen(self, broker_id: int, servers: list[asyncio.Server]) -> None:
        """Bind the broker's listeners into `servers`, then publish their addresses."""
        protocol = self.security.protocol if self.security is not None else "PLAINTEXT"
        client = Dispatcher(self.state, broker_id, self, protocol)
        server = await _start_server(
            self._connection_handler(broker_id, client, self.security),
            self.host,
            self.ports[broker_id],
            ssl=self.security.ssl_context if self.security is not None else None,
        )
        servers.append(server)
        self.ports[broker_id] = server.sockets[0].getsockname()[1]
        if self.harness is not None:
            harness = Dispatcher(
                self.state,
                broker_id,
                self,
                _HARNESS_SECURITY.protocol,
                HARNESS_LISTENER,
                self.harness.credentials(),
            )
            # One broker, one fetch session cache, whichever listener a session uses.
            harness.fetch_sessions = client.fetch_sessions
            server = await _start_server(
                self._connection_handler(broker_id, harness, _HARNESS_SECURITY),
                self.harness.host,
                self.harness_ports[broker_id],
                ssl=None,
            )
            servers.append(server)
            port = server.sockets[0].getsockname()[1]
            self.harness_ports[broker_id] = port
            self.state.cluster.set_address(broker_id, self.harness.host, port, HARNESS_LISTENER)
        self.state.cluster.set_address(broker_id, self.host, self.ports[broker_id], CLIENT_LISTENER)

    async def stop(self) -> None:
        """Close listeners and every client connection; the state is kept."""
        for broker_id in list(self._servers):
            await self.stop_broker(broker_id)

    async def stop_broker(self, broker_id: int) -> None:
        """Close one broker id's listeners and its client connections."""
        servers = self._servers.pop(broker_id, [])
        for server in servers:
            server.close()
        connections = list(self._connections.pop(broker_id, ()))
        for task in connections:
            task.cancel()
        for task in connections:
            with contextlib.suppress(BaseException):
                await task
        for server in servers:
            await server.wait_closed()

    def _connection_handler(
        self, broker_id: int, dispatcher: Dispatcher, security: ListenerSecurity | None
    ) -> Callable[[NotifyingStreamReader, asyncio.StreamWriter], Awaitable[None]]:
        async def on_connect(reader: NotifyingStreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            open_here = self._connections.setdefault(broker_id, set())
            open_here.add(task)
            try:
                await serve_connection(
                    reader,
                    writer,
                    dispatcher,
                    next(self._connection_ids),
                    self.max_frame_bytes,
                    security,
                    self.timings,
                )
            except asyncio.CancelledError:
                # stop() cancels connections; ending quietly keeps asyncio from
                # reporting the cancellation as an error of the stream callback.
                writer.transport.abort()
            finally:
                open_here.discard(task)

        return on_connect

    async def before_dispatch(self, ctx: RequestContext, request: Any) -> FaultDecision | None:
        """Forward to the current fault hook, so `faults` can be swapped at any time;
        with the request log on, the answer is recorded whatever the hook decided."""
        self.requests_seen += 1
        decision = await self.faults.before_dispatch(ctx, request)
        log = self.request_log
        if log is None:
            return decision

        def record(response: Any) -> None:
            log.record(ctx, request, response)

        if decision is None:
            return FaultDecision(on_response=record)
        return replace(decision, on_response=record)


async def _start_server(
    on_connect: Callable[[NotifyingStreamReader, asyncio.StreamWriter], Awaitable[None]],
    host: str,
    port: int,
    ssl: ssl_module.SSLContext | None,
) -> asyncio.Server:
    """asyncio.start_server, with readers that signal each arrival of bytes (a parked
    Fetch answers when the client sends its next request: `inbox`)."""
    loop = asyncio.get_running_loop()

    def protocol() -> asyncio.StreamReaderProtocol:
        reader = NotifyingStreamReader(loop=loop)
        return asyncio.StreamReaderProtocol(reader, on_connect, loop=loop)  # type: ignore[arg-type]

    return await loop.create_server(protocol, host, port, reuse_address=True, ssl=ssl)
