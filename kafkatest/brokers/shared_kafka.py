"""One `kafka` backend for all pytest-xdist workers of a run.

Each worker would otherwise start a Kafka JVM of its own (a 1 GB heap, 20-60 s on a
loaded machine). Instead the workers of one run (xdist's ``testrunuid``) meet in a
run directory: under a file lock, each writes a lease (a file named by its pid); the
first one spawns a *watchdog* process that owns the Kafka JVM and writes its address
to ``state.json``; the others read it and attach. The watchdog, not a worker, is the
JVM's parent, so a worker that is SIGKILLed takes nothing from the others; the
watchdog stops Kafka (and removes the run directory) when no lease's pid is alive
any more or the xdist controller is gone, so nothing outlives the run either.

Faults that stop, restart, kill or pause the broker would break every other
worker's tests at once, so on a shared broker they are refused by name.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from kafkatest._ground import tempdirs
from kafkatest.brokers.kafka_process import KafkaProcessBroker
from kafkatest.errors import BrokerError, UnsupportedOperation

#: Where run directories live: ``kafkatest-xdist-<testrunuid>-<settings hash>``.
RUN_PREFIX = "kafkatest-xdist-"
_STATE = "state.json"
_ERROR = "error.txt"
_LEASES = "leases"
#: How often the watchdog looks for dead lease holders.
POLL_S = 0.5

_REFUSAL = (
    "the kafka backend is shared by every pytest-xdist worker of this run (pid {pids}); "
    "{action} it would break the tests the other workers are running. Run tests that "
    "stop, restart, kill or pause the broker without xdist (-p no:xdist, or -n 0), or "
    "start a broker of their own with kafkatest.start_broker('kafka')"
)


def run_directory(run_id: str, settings: Mapping[str, str]) -> Path:
    """The meeting place of one run's workers for a broker with these settings."""
    key = hashlib.sha256(json.dumps(sorted(settings.items())).encode()).hexdigest()[:10]
    safe = "".join(c for c in run_id if c.isalnum())[:32] or "run"
    return Path(tempfile.gettempdir()) / f"{RUN_PREFIX}{safe}-{key}"


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """An exclusive lock on `directory`/lock that survives the directory's removal.

    The watchdog removes the run directory when it is done; a worker that opened the
    lock file before that would otherwise lock a deleted file, so the lock is only
    held once the file locked is the one at the path.
    """
    while True:
        (directory / _LEASES).mkdir(parents=True, exist_ok=True)
        fd = os.open(directory / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = os.stat(directory / "lock").st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        yield
    finally:
        os.close(fd)


def alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie, e.g. a killed worker not yet
    reaped by the xdist controller, counts as dead)."""
    if not tempdirs.process_alive(pid):
        return False
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    return True


def live_leases(directory: Path) -> list[int]:
    """Pids holding a lease that are still alive; the leases of dead ones are dropped."""
    pids: list[int] = []
    for lease in (directory / _LEASES).glob("*"):
        if lease.name.isdigit() and alive(int(lease.name)):
            pids.append(int(lease.name))
        else:
            lease.unlink(missing_ok=True)
    return sorted(pids)


def _read_state(directory: Path) -> dict[str, Any] | None:
    try:
        state: dict[str, Any] = json.loads((directory / _STATE).read_text())
    except (OSError, ValueError):
        return None
    return state if alive(int(state["watchdog_pid"])) else None


class SharedKafkaBroker(KafkaProcessBroker):
    """A worker's handle on the run's one Kafka broker, run by a watchdog process.

    Reading and writing topics, ACLs, compaction and the broker log work as on a
    broker of one's own; stopping, restarting, killing and pausing are refused.
    """

    def __init__(
        self,
        directory: Path,
        controller_pid: int,
        settings: Mapping[str, object] | None = None,
        startup_timeout_s: float = 300.0,
    ) -> None:
        super().__init__(settings=settings, startup_timeout_s=startup_timeout_s)
        self.directory = directory
        self.controller_pid = controller_pid
        self._given = {k: str(v) for k, v in (settings or {}).items()}
        self._leased = False
        #: The Kafka JVM's pid (read-only: the watchdog owns it).
        self.jvm_pid: int | None = None
        self.watchdog_pid: int | None = None

    def start(self) -> None:
        """Take a lease and attach; the first worker of the run starts the watchdog."""
        if self._leased:
            return
        with _locked(self.directory):
            (self.directory / _LEASES / str(os.getpid())).touch()
            self._leased = True
            state = _read_state(self.directory)
            if state is None:
                state = self._start_watchdog()
        self._port = int(state["port"])
        self._workdir = Path(state["workdir"])
        self.jvm_pid = int(state["jvm_pid"])
        self.watchdog_pid = int(state["watchdog_pid"])

    def _start_watchdog(self) -> dict[str, Any]:
        (self.directory / _ERROR).unlink(missing_ok=True)
        (self.directory / _STATE).unlink(missing_ok=True)
        log = open(self.directory / "watchdog.log", "ab")  # noqa: SIM115 - the child's
        try:
            watchdog = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "kafkatest.brokers.shared_kafka",
                    str(self.directory),
                    str(self.controller_pid),
                    json.dumps(self._given),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                # Its own session: neither a worker's death nor Ctrl-C's SIGINT reaches it.
                start_new_session=True,
            )
        finally:
            log.close()
        deadline = time.monotonic() + self.startup_timeout_s
        while True:
            state = _read_state(self.directory)
            if state is not None:
                return state
            if watchdog.poll() is not None or time.monotonic() > deadline:
                with contextlib.suppress(OSError):
                    watchdog.kill()
                    watchdog.wait(10)
                error = ""
                with contextlib.suppress(OSError):
                    error = (self.directory / _ERROR).read_text()
                raise BrokerError(
                    "the shared Apache Kafka broker of this xdist run did not start "
                    f"(watchdog log: {self.directory / 'watchdog.log'}):\n{error}"
                )
            time.sleep(0.2)

    def close(self) -> None:
        """Drop this worker's lease; the last one out waits for the broker to stop."""
        self.close_clients()
        if not self._leased:
            return
        self._leased = False
        with _locked(self.directory):
            (self.directory / _LEASES / str(os.getpid())).unlink(missing_ok=True)
            last = not live_leases(self.directory)
            if last and _read_state(self.directory) is None:
                # The watchdog already went (the controller did): tidy its directory.
                shutil.rmtree(self.directory, ignore_errors=True)
        if last and self.watchdog_pid is not None:
            deadline = time.monotonic() + 60
            while alive(self.watchdog_pid) and time.monotonic() < deadline:
                time.sleep(0.1)
        self._port = None
        self._workdir = None

    def _refuse(self, action: str) -> UnsupportedOperation:
        pids = ", ".join(map(str, live_leases(self.directory)))
        return UnsupportedOperation(_REFUSAL.format(pids=pids, action=action))

    def stop(self) -> None:
        raise self._refuse("stopping")

    def kill(self) -> None:
        raise self._refuse("killing")

    def restart(self) -> None:
        raise self._refuse("restarting")

    @property
    def pid(self) -> int | None:
        """Refused: pausing (SIGSTOP) the shared JVM would stall every worker."""
        raise self._refuse("pausing")

    def add_user(self, name: str, password: str, mechanism: str | None = None) -> None:
        raise self._refuse("adding users to")


def watch(directory: Path, controller_pid: int, settings: dict[str, str]) -> int:
    """The watchdog: run Kafka until no lease holder (or the controller) is alive."""
    stopping: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, frame: stopping.append(signum))
    broker = KafkaProcessBroker(settings=settings, startup_timeout_s=300.0)
    try:
        broker.start()
    except BaseException as exc:
        (directory / _ERROR).write_text(f"{type(exc).__name__}: {exc}")
        broker.close()
        return 1
    state = {
        "port": broker.bootstrap_servers.rpartition(":")[2],
        "workdir": str(broker.log_path.parent) if broker.log_path else "",
        "jvm_pid": broker.pid,
        "watchdog_pid": os.getpid(),
    }
    partial = directory / f"{_STATE}.tmp"
    partial.write_text(json.dumps(state))
    partial.replace(directory / _STATE)
    try:
        while not stopping:
            time.sleep(POLL_S)
            with _locked(directory):
                if not live_leases(directory) or not alive(controller_pid):
                    # Gone before the lock is let go: a late worker starts a new broker
                    # rather than attach to this closing one.
                    (directory / _STATE).unlink(missing_ok=True)
                    break
    finally:
        with _locked(directory):
            (directory / _STATE).unlink(missing_ok=True)
        broker.close()
        with _locked(directory):
            # With the controller gone the run is over, whatever leases remain.
            over = not alive(controller_pid) or not live_leases(directory)
            if _read_state(directory) is None and over:
                shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":  # pragma: no cover - run as the watchdog process
    sys.exit(watch(Path(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])))
