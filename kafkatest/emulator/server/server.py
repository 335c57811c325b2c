"""Listeners for every emulated broker id, all backed by one shared state.

Stopping closes listeners and every open connection but keeps the state, so a
restart looks to clients like a broker outage with no data loss. Ports are kept
across restarts so that clients reconnect to the addresses they know. One broker
of several can be stopped alone (`stop_broker`): its listener and connections go,
as a broker process would.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import ssl as ssl_module
from collections.abc import Awaitable, Callable
from typing import Any

from kafkatest.emulator.protocol.framing import DEFAULT_MAX_FRAME_BYTES
from kafkatest.emulator.server.connection import serve_connection
from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.dispatch import Dispatcher
from kafkatest.emulator.server.faults import FaultDecision, FaultHook, NoFaults
from kafkatest.emulator.server.inbox import NotifyingStreamReader
from kafkatest.emulator.server.security import ListenerSecurity
from kafkatest.emulator.server.timings import RequestTimings
from kafkatest.emulator.state import EmulatorState

log = logging.getLogger("kafkatest.emulator")


class EmulatorServer:
    def __init__(
        self,
        state: EmulatorState,
        host: str = "127.0.0.1",
        first_port: int = 0,
        faults: FaultHook | None = None,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        security: ListenerSecurity | None = None,
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
        #: Per-request phase timings, when asked for (`RequestTimings`); None costs nothing.
        self.timings: RequestTimings | None = None
        self._servers: dict[int, asyncio.Server] = {}
        #: Open connections per broker id.
        self._connections: dict[int, set[asyncio.Task[None]]] = {}
        self._connection_ids = itertools.count(1)

    @property
    def running(self) -> bool:
        return bool(self._servers)

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{self.host}:{port}" for port in self.ports.values())

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
        """Listen for one broker id (on its earlier port, if it had one)."""
        if broker_id in self._servers:
            return
        server = await _start_server(
            self._connection_handler(broker_id),
            self.host,
            self.ports[broker_id],
            ssl=self.security.ssl_context if self.security is not None else None,
        )
        self._servers[broker_id] = server
        bound = server.sockets[0].getsockname()[1]
        self.ports[broker_id] = bound
        self.state.cluster.set_address(broker_id, self.host, bound)

    async def stop(self) -> None:
        """Close listeners and every client connection; the state is kept."""
        for broker_id in list(self._servers):
            await self.stop_broker(broker_id)

    async def stop_broker(self, broker_id: int) -> None:
        """Close one broker id's listener and its client connections."""
        server = self._servers.pop(broker_id, None)
        if server is not None:
            server.close()
        connections = list(self._connections.pop(broker_id, ()))
        for task in connections:
            task.cancel()
        for task in connections:
            with contextlib.suppress(BaseException):
                await task
        if server is not None:
            await server.wait_closed()

    def _connection_handler(
        self, broker_id: int
    ) -> Callable[[NotifyingStreamReader, asyncio.StreamWriter], Awaitable[None]]:
        protocol = self.security.protocol if self.security is not None else "PLAINTEXT"
        dispatcher = Dispatcher(self.state, broker_id, self, protocol)

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
                    self.security,
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
        """Forward to the current fault hook, so `faults` can be swapped at any time."""
        return await self.faults.before_dispatch(ctx, request)


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
