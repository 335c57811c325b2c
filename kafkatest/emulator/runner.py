"""The emulator as one object: its server on its own event loop thread, its state,
listeners, request hooks, request log and clock (`kafkatest.emulator.Emulator`).

Tests and the pytest plugin are synchronous; the broker is asyncio. A daemon
thread owns the loop, and `call` runs a function on it, so state can be read or
changed from the test thread without racing the handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine, Iterable
from concurrent.futures import Future
from typing import Any, TypeVar

from kafkatest.emulator.control.hook import InjectedFaults
from kafkatest.emulator.control.request_hooks import RequestHook
from kafkatest.emulator.protocol.messages import load_schemas
from kafkatest.emulator.server import EmulatorServer
from kafkatest.emulator.server.faults import FaultHook, NoFaults
from kafkatest.emulator.server.handlers import load_handlers
from kafkatest.emulator.server.security import ListenerSecurity
from kafkatest.emulator.server.server import HarnessListener
from kafkatest.emulator.server.timings import RequestTimings
from kafkatest.emulator.state import BrokerSettings, EmulatorState
from kafkatest.emulator.state.time_passes import back_to_real_time, pass_time

T = TypeVar("T")

#: How long no request must have come before an idle-time schema load starts: the
#: gaps inside a client's burst of requests are a few milliseconds.
IDLE_BEFORE_LOADING_S = 0.015
#: After one idle-time load, how long to look for a request that came in during it
#: before the next load.
RESUME_CHECK_S = 0.002

# Importing the handlers (and the kio schemas they use) costs tens of
# milliseconds: pay it at import so that starting a broker takes about one.
load_handlers()


#: Why a call that needs the loop to be free is refused on the loop's own thread.
OWN_THREAD = (
    "this waits for the emulator's loop, and it was called on that loop's own thread "
    "(from a request hook, which runs inside the request it was consulted for): the "
    "loop would wait for the hook and the hook for the loop. Do it from the test, "
    "after the hook has fired (a hook may read and change `state`, and move the clock)"
)


class Emulator:
    """An emulated cluster whose server runs on a background event loop: its `state`,
    its `server` (one listener per broker id, its `request_log` and `faults` hook), and
    what a test does to its requests (`hooks`)."""

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
        #: (API key, version) pairs asked of `load_schemas_when_idle`, and its loaders.
        self._schemas_asked: set[tuple[int, int]] = set()
        self._loaders: set[asyncio.Task[None]] = set()

    @property
    def bootstrap_servers(self) -> str:
        return self.server.bootstrap_servers

    @property
    def running(self) -> bool:
        return self.server.running

    @property
    def hooks(self) -> InjectedFaults:
        """The request hooks, fault rules, pause gate and round-trip time, installed
        (in front of any other `server.faults` hook) when first asked for."""
        current = self.server.faults
        if isinstance(current, InjectedFaults):
            return current
        injected = InjectedFaults(None if isinstance(current, NoFaults) else current)
        self.server.faults = injected
        return injected

    def on_request(
        self,
        api: str | int,
        fn: Callable[[Any], Any],
        *,
        topic: str | None = None,
        client_id: str | None = None,
        times: int | None = None,
    ) -> RequestHook:
        """Let `fn(request)` decide how matching requests are treated (see
        `kafkatest.emulator.control.request_hooks`); returns the hook (`remove()`, or
        use it as a context manager; `fired` says whether it has seen a request). The
        fault fixture's teardown removes it too."""
        hook = RequestHook(api, fn, topic=topic, client_id=client_id, times=times)
        return self.hooks.add_hook(hook)

    def record_timings(self) -> RequestTimings:
        """Time every request from connections opened from now on: queued, handled,
        written, and the client's idle time before it (see `RequestTimings`)."""
        timings = RequestTimings()
        self.server.timings = timings
        return timings

    def pass_time(self, ms: int) -> int:
        """Move the clock forward and run what fell due, on the loop; the new time."""
        return self.call(lambda: pass_time(self.state, ms))

    def back_to_real_time(self, frozen: bool = False) -> int:
        """Put the clock back on the wall clock (frozen there if `frozen`); the time."""
        return self.call(lambda: back_to_real_time(self.state, frozen))

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

    def load_schemas_when_idle(self, versions: Iterable[tuple[int, int]]) -> None:
        """Load these (API key, version) pairs' schemas on the loop, in order, once no
        request has come for `IDLE_BEFORE_LOADING_S`, and on while none comes.

        A client's first request of an API version waits while its schema loads
        (`protocol.messages.load_schemas`). A caller that knows which versions a client
        is about to send (Spark's Kafka client, while its job starts in the JVM and
        the broker has nothing to do) has them loaded in that idle time instead; a
        request that arrives meanwhile waits at most for the one load under way.
        Versions the broker does not serve, and pairs asked before, are skipped.
        """
        loop = self._loop
        if loop is None:
            return
        handlers = load_handlers()
        wanted = [
            (api_key, version)
            for api_key, version in dict.fromkeys(versions)
            if (api_key, version) not in self._schemas_asked
            and api_key in handlers
            and handlers[api_key].supports(version)
        ]
        if not wanted:
            return
        self._schemas_asked.update(wanted)

        async def load() -> None:
            pause = IDLE_BEFORE_LOADING_S
            for api_key, version in wanted:
                while True:
                    seen = self.server.requests_seen
                    await asyncio.sleep(pause)
                    if self.server.requests_seen == seen:
                        break
                    pause = IDLE_BEFORE_LOADING_S
                # A schema kio cannot build fails its first request as it would have
                # anyway; the head start is all that is lost.
                with contextlib.suppress(Exception):
                    load_schemas(api_key, version)
                # Still idle? Loads go on back to back while no request has come in
                # during the last one (a request dispatches within a few loop turns).
                pause = RESUME_CHECK_S

        def begin() -> None:
            task = loop.create_task(load(), name="kafkatest-emulator-schemas")
            self._loaders.add(task)
            task.add_done_callback(self._loaders.discard)

        loop.call_soon_threadsafe(begin)

    def close(self) -> None:
        """Stop serving and end the loop thread (safe to call twice)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return

        async def end_loaders() -> None:
            for task in list(self._loaders):
                task.cancel()
            await asyncio.gather(*self._loaders, return_exceptions=True)

        self._run(end_loaders())
        self.stop()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        loop.close()
        self._loop = self._thread = None

    def call(self, function: Callable[[], T], timeout_s: float = 30.0) -> T:
        """Run `function` on the broker's loop thread and return its result.

        Called on that thread already (a request hook that moves the clock or reads
        the state runs there, inside the request it was consulted for), it runs at
        once: waiting for the loop to take it would wait for the hook to return,
        and every client would stand still until the time-out."""
        if self._loop is None or self.on_loop_thread():
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

    def on_loop_thread(self) -> bool:
        """Whether the caller runs on the broker's loop thread (a request hook does)."""
        return self._thread is not None and threading.current_thread() is self._thread

    def _run(self, coroutine: Coroutine[Any, Any, T], timeout_s: float = 30.0) -> T:
        assert self._loop is not None
        if self.on_loop_thread():
            coroutine.close()
            raise RuntimeError(OWN_THREAD)
        future: Future[T] = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return future.result(timeout_s)


#: The name this type had before `kafkatest.emulator` exported it as `Emulator`.
EmulatorRunner = Emulator
