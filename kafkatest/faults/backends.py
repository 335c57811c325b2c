"""What only a backend itself can do: pause it, and make its retention run now.

Everything else the fault API does goes over the wire or through the `Broker`
interface; these few operations need the backend's own handle (the JVM's pid,
the emulator's clock and fault hook), so each backend gets a small control.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol, cast

from kafkatest.brokers.base import Broker
from kafkatest.errors import UnsupportedOperation
from kafkatest.faults.compaction import LocalKafka, compact_on_kafka


class BackendControl(Protocol):
    def pause(self) -> None: ...
    def resume(self) -> None: ...
    def run_retention(self, retention_ms: int, first: bool) -> None:
        """Make retention happen (or wait for the broker's own periodic check)."""
        ...

    def compact(
        self, topic: str, until: int | Mapping[int, int] | None, roll: bool, timeout_s: float
    ) -> dict[int, int]:
        """Compact what `topic` holds now (see `Faults.compact_now`)."""
        ...


class KafkaProcessControl:
    """Real Kafka: the JVM is frozen with SIGSTOP, so sockets stay open but mute."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker

    def _pids(self) -> list[int]:
        """The broker's JVM, or every JVM of a cluster (`pids`)."""
        pids = getattr(self.broker, "pids", None)
        if pids is None:
            pid = getattr(self.broker, "pid", None)
            pids = [] if pid is None else [pid]
        return [int(p) for p in pids]

    def pause(self) -> None:
        pids = self._pids()
        if not pids:
            raise UnsupportedOperation("the kafka backend has no running broker process to pause")
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        for pid in pids:
            _wait_until_stopped(pid)

    def resume(self) -> None:
        for pid in self._pids():
            os.kill(pid, signal.SIGCONT)

    def run_retention(self, retention_ms: int, first: bool) -> None:
        """Nothing to do: kafkatest's broker checks retention every 500 ms."""

    def compact(
        self, topic: str, until: int | Mapping[int, int] | None, roll: bool, timeout_s: float
    ) -> dict[int, int]:
        if not hasattr(self.broker, "cleaner_checkpoints"):
            raise UnsupportedOperation(
                "compact_now reads one broker's log directory: run it on a one-node kafka "
                "broker (a cluster's replicas each keep their own)"
            )
        local = cast(LocalKafka, self.broker)
        return compact_on_kafka(self.broker, local, topic, until, roll, timeout_s)


def _wait_until_stopped(pid: int, timeout_s: float = 5.0) -> None:
    """Return once every thread of `pid` is stopped.

    kill() returns while a busy JVM's threads are still running; one of them may
    answer a request that was sent after `pause()` returned.
    """
    tasks = Path(f"/proc/{pid}/task")
    if not tasks.is_dir():  # not Linux: nothing to observe, the signal will land
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        states = []
        for stat in tasks.glob("*/stat"):
            with contextlib.suppress(OSError):
                states.append(stat.read_text().rsplit(")", 1)[1].split()[0])
        if states and all(state in ("T", "t") for state in states):
            return
        time.sleep(0.005)


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

    def compact(
        self, topic: str, until: int | Mapping[int, int] | None, roll: bool, timeout_s: float
    ) -> dict[int, int]:
        raise UnsupportedOperation(
            f"compact_now on the {self.broker.backend!r} backend cannot see when the broker's "
            "cleaner has run (kafkatest reads it from the log directory of a broker it runs): "
            "use the emulator or kafka backend"
        )
