"""Run an emulator server on its own event loop thread.

Tests and the pytest plugin are synchronous; the broker is asyncio. A daemon
thread owns the loop, and `call` runs a function on it, so state can be read or
changed from the test thread without racing the handlers.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

from kafkatest.emulator.server import EmulatorServer
from kafkatest.emulator.server.faults import FaultHook
from kafkatest.emulator.server.handlers import load_handlers
from kafkatest.emulator.server.security import ListenerSecurity
from kafkatest.emulator.server.server import HarnessListener
from kafkatest.emulator.state import BrokerSettings, EmulatorState

T = TypeVar("T")

# Importing the handlers (and the kio schemas they use) costs tens of
# milliseconds: pay it at import so that starting a broker takes about one.
load_handlers()


class EmulatorRunner:
    """An emulated cluster whose server runs on a background event loop."""

    def __init__(
        self,
        brokers: int = 1,
        host: str = "127.0.0.1",
        first_port: int = 0,
        settings: BrokerSettings | None = None,
        faults: FaultHook | None = None,
        security: ListenerSecurity | None = None,
        harness: HarnessListener | None = None,
    ) -> None:
        self.state = EmulatorState(brokers, settings)
        self.server = EmulatorServer(
            self.state, host, first_port, faults, security=security, harness=harness
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def bootstrap_servers(self) -> str:
        return self.server.bootstrap_servers

    @property
    def running(self) -> bool:
        return self.server.running

    def start(self) -> None:
        self._ensure_loop()
        self._run(self.server.start())

    def stop(self) -> None:
        if self._loop is not None:
            self._run(self.server.stop())

    def stop_broker(self, broker_id: int) -> None:
        """One broker of several goes down: leaders move (`state.replicas`), then its
        listener and connections close, as a controlled shutdown would."""

        async def stop_one() -> None:
            self.state.stop_broker(broker_id)
            await self.server.stop_broker(broker_id)

        self._run(stop_one())

    def start_broker(self, broker_id: int) -> None:
        async def start_one() -> None:
            if self.server.running:
                await self.server.start_broker(broker_id)
            self.state.start_broker(broker_id)

        self._run(start_one())

    def close(self) -> None:
        """Stop serving and end the loop thread (safe to call twice)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        self.stop()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        loop.close()
        self._loop = self._thread = None

    def call(self, function: Callable[[], T], timeout_s: float = 30.0) -> T:
        """Run `function` on the broker's loop thread and return its result."""
        if self._loop is None:
            return function()

        async def run() -> T:
            return function()

        return self._run(run(), timeout_s)

    def _ensure_loop(self) -> None:
        if self._loop is not None:
            return
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run_loop() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            loop.run_forever()

        thread = threading.Thread(target=run_loop, name="kafkatest-emulator", daemon=True)
        thread.start()
        ready.wait()
        self._loop, self._thread = loop, thread

    def _run(self, coroutine: Coroutine[Any, Any, T], timeout_s: float = 30.0) -> T:
        assert self._loop is not None
        future: Future[T] = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return future.result(timeout_s)
