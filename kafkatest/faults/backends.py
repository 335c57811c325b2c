"""What only a backend itself can do: pause it, and make its retention run now.

Everything else the fault API does goes over the wire or through the `Broker`
interface; these few operations need the backend's own handle (the JVM's pid,
the emulator's clock and fault hook), so each backend gets a small control.
"""

from __future__ import annotations

import os
import signal
from typing import Protocol

from kafkatest.brokers.base import Broker
from kafkatest.errors import UnsupportedOperation


class BackendControl(Protocol):
    def pause(self) -> None: ...
    def resume(self) -> None: ...
    def run_retention(self, retention_ms: int, first: bool) -> None:
        """Make retention happen (or wait for the broker's own periodic check)."""
        ...


class KafkaProcessControl:
    """Real Kafka: the JVM is frozen with SIGSTOP, so sockets stay open but mute."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker

    def _pid(self) -> int:
        pid = getattr(self.broker, "pid", None)
        if pid is None:
            raise UnsupportedOperation("the kafka backend has no running broker process to pause")
        return int(pid)

    def pause(self) -> None:
        os.kill(self._pid(), signal.SIGSTOP)

    def resume(self) -> None:
        pid = getattr(self.broker, "pid", None)
        if pid is not None:
            os.kill(int(pid), signal.SIGCONT)

    def run_retention(self, retention_ms: int, first: bool) -> None:
        """Nothing to do: kafkatest's broker checks retention every 500 ms."""


class UnpausableControl:
    """Backends kafkatest does not run itself (container, external)."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker

    def pause(self) -> None:
        raise UnsupportedOperation(
            f"the {self.broker.backend!r} backend cannot be paused by kafkatest: it would need "
            "the broker process (or `docker pause` on its container); use the emulator or kafka backend"
        )

    def resume(self) -> None:
        """Never paused, so nothing to resume."""

    def run_retention(self, retention_ms: int, first: bool) -> None:
        """The broker's own log.retention.check.interval.ms decides when."""
