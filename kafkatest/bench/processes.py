"""The broker processes the bench measures, and how it runs them side by side.

The emulator runs as a child process (`EmulatorProcess`, `kafkatest emulator`), like
the Kafka JVM, so that its memory can be read and the clients' Python work does not
share its interpreter; brokers take turns (`alone`: the others SIGSTOPped) and can be
pinned to one core (`one_core`) for the contended figures.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from confluent_kafka.admin import AdminClient

from kafkatest.brokers.process import free_port, spawn, terminate

_FIRST_START = """
import json, time
started = time.perf_counter()
from kafkatest.brokers.emulator import EmulatorBroker
imported = time.perf_counter()
broker = EmulatorBroker()
broker.start()
ready = time.perf_counter()
broker.close()
print(json.dumps({"import_s": imported - started, "startup_s": ready - imported}))
"""


def in_process_emulator_startup() -> dict[str, float]:
    """The first in-process start in a fresh interpreter, as a test session pays it.

    Importing the emulator (handlers and protocol schemas) is timed apart: a run
    pays it once, whatever it starts.
    """
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_START], capture_output=True, text=True, check=True
    )
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return {key: round(value, 4) for key, value in figures.items()}


class EmulatorProcess:
    """`kafkatest emulator` as a child process on a free port; with `tree`, the
    emulator of that source tree (its directory first on the child's PYTHONPATH)."""

    backend = "emulator"

    def __init__(self, workdir: Path, tree: str | None = None) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.tree = tree
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self) -> None:
        command = [sys.executable, "-m", "kafkatest.cli", "emulator", "--port", str(self.port)]
        log, cwd = self.workdir / "emulator.log", Path(self.tree or self.workdir)
        self.process = spawn(command, log, cwd, {"PYTHONPATH": self.tree} if self.tree else None)
        # Quiet: until the child listens, librdkafka would log every refused connect.
        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers, "log_level": 0})
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if admin.list_topics(timeout=1).brokers:
                    return
            except Exception:
                time.sleep(0.02)
        raise RuntimeError("standalone emulator did not start")

    def close(self) -> None:
        if self.process is not None:
            terminate(self.process)


@contextlib.contextmanager
def alone(brokers: dict[str, Any], measured: str) -> Iterator[None]:
    """Pause every broker process but `measured` (SIGSTOP) for the block, so that the
    brokers can take turns without one's idle work landing on the other's: an idle
    Kafka JVM takes a tenth of a core here, an idle emulator none. A turn lasts a
    second or two, well inside Kafka's broker session timeout (9 s)."""
    stopped: list[int] = []
    try:
        for name, broker in brokers.items():
            if name != measured:
                os.kill(broker.pid, signal.SIGSTOP)
                stopped.append(broker.pid)
        for pid in stopped:
            _wait_until_stopped(pid)
        yield
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)


def process_state(pid: int) -> str:
    """The state letter of a process in /proc ("T": stopped by a signal)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _wait_until_stopped(pid: int, timeout_s: float = 5.0) -> None:
    """SIGSTOP takes effect when the process next runs, not when `kill` returns: wait
    for it, so that a turn never starts beside a broker still finishing its slice."""
    deadline = time.monotonic() + timeout_s
    while process_state(pid) != "T":
        if time.monotonic() > deadline:
            raise RuntimeError(f"broker process {pid} did not stop within {timeout_s} s")
        time.sleep(0.001)


@contextlib.contextmanager
def running(brokers: dict[str, Any]) -> Iterator[dict[str, float]]:
    """Start every broker, one after the other; yields the seconds each took to be
    ready, and closes them all on leaving."""
    startup: dict[str, float] = {}
    try:
        for name, broker in brokers.items():
            started = time.perf_counter()
            broker.start()
            startup[name] = round(time.perf_counter() - started, 3)
        yield startup
    finally:
        for broker in brokers.values():
            broker.close()


@contextlib.contextmanager
def one_core() -> Iterator[None]:
    """Pin this process, and so the broker and clients it starts, to one core: the
    contention a loaded CI machine gives, where broker and clients share a core."""
    everything = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(everything)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, everything)


def _kafka_process(scratch: Path) -> Any:
    from kafkatest.brokers.kafka_process import KafkaProcessBroker

    broker = KafkaProcessBroker()
    broker.jvm_flags = ("-XX:+UseG1GC",)  # kafka-run-class's collector, full JIT: as deployed
    return broker


#: The broker each benched backend runs as: the emulator as a child process like
#: the JVM, so that both pay for a process of their own.
BENCH_BROKERS: dict[str, Callable[[Path], Any]] = {
    "emulator": EmulatorProcess,
    "kafka": _kafka_process,
}


def bench_broker(backend: str, scratch: Path) -> Any:
    return BENCH_BROKERS[backend](scratch)
