"""The in-process emulator as a `Broker`: starts in milliseconds, no JVM.

`state` is exposed for fault injection and for tests that need to move the
broker's clock or enforce retention; change it through `call` so the change runs
on the broker's own thread.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TypeVar

from kafkatest.brokers.base import Broker
from kafkatest.emulator.exposure import ExposedEmulatorWarning, exposure_warning
from kafkatest.emulator.runner import EmulatorRunner
from kafkatest.emulator.server.faults import FaultHook
from kafkatest.emulator.state import BrokerSettings, EmulatorState
from kafkatest.errors import BrokerError

T = TypeVar("T")


class EmulatorBroker(Broker):
    backend = "emulator"

    def __init__(
        self,
        brokers: int = 1,
        host: str = "127.0.0.1",
        port: int = 0,
        settings: BrokerSettings | None = None,
    ) -> None:
        warning = exposure_warning(host)
        if warning is not None:
            warnings.warn(warning, ExposedEmulatorWarning, stacklevel=2)
        self._runner = EmulatorRunner(brokers, host, port, settings)

    @property
    def state(self) -> EmulatorState:
        return self._runner.state

    @property
    def faults(self) -> FaultHook:
        return self._runner.server.faults

    @faults.setter
    def faults(self, hook: FaultHook) -> None:
        self._runner.server.faults = hook

    @property
    def bootstrap_servers(self) -> str:
        if not self._runner.running:
            raise BrokerError("the emulator is not running: call start() first")
        return self._runner.bootstrap_servers

    @property
    def running(self) -> bool:
        return self._runner.running

    def start(self) -> None:
        try:
            self._runner.start()
        except OSError as exc:
            raise BrokerError(f"the emulator could not listen: {exc}") from exc

    def stop(self) -> None:
        """Close listeners and connections; topics and data are kept for `start`.

        As on a one-node Kafka, every partition comes back two leader epochs later
        (leaderless at shutdown, led again at start-up).
        """
        if self._runner.running:
            self._runner.stop()
            self.call(self.state.reelect_leaders)

    def close(self) -> None:
        if self._runner.running:
            self.close_clients()
        self._runner.close()

    def call(self, function: Callable[[], T]) -> T:
        """Run `function` on the emulator's thread (the safe way to touch `state`)."""
        return self._runner.call(function)

    def advance_clock(self, ms: int) -> None:
        """Move the broker's clock forward (ages data for retention, LogAppendTime,
        times transactions out: Kafka's periodic abort runs as the time passes)."""

        def advance() -> None:
            self.state.clock.advance(ms)
            self.state.maybe_abort_timed_out_transactions()

        self.call(advance)

    def enforce_retention(self) -> None:
        """Apply retention.ms / retention.bytes now, as Kafka's periodic check would."""
        self.call(self.state.enforce_retention)

    def diagnostics(self) -> str:
        if not self._runner.running:
            return "emulator stopped"
        topics = self.call(lambda: [(t.name, len(t.partitions)) for t in self.state.topics])
        return f"emulator at {self._runner.bootstrap_servers}; topics: {topics}"
