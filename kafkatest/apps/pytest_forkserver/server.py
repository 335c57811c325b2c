"""The fork server: preload, then fork a child per request until idle, stopped or
stale. `python -m kafkatest.apps.pytest_forkserver.server SOCKET IDLE_MINUTES [MODULE...]`
is how a client starts it."""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkatest._ground.tempdirs import boot_id
from kafkatest.apps.pytest_forkserver.child import run_child
from kafkatest.apps.pytest_forkserver.place import pytest_command, scripts_dir, write_private
from kafkatest.apps.pytest_forkserver.requests import (
    MAX_PENDING,
    READ_DEADLINE_S,
    PendingRequest,
    Refused,
)


def preload(extra: Sequence[str]) -> None:
    """Import what every run imports: pytest and its installed plugins (through one
    run over an empty folder, so that pytest's assertion rewriting loads them as it
    would), PySpark's Connect client where installed, kafkatest's emulator and the
    user's own list."""
    import tempfile

    import pytest

    # The caller's PYTEST_ADDOPTS are each run's, not this warm-up's (`-n 4` here
    # would start workers to collect nothing).
    addopts = os.environ.pop("PYTEST_ADDOPTS", None)
    try:
        with tempfile.TemporaryDirectory(prefix="kafkatest-preload-") as empty, _output_discarded():
            pytest.main(["--collect-only", "-q", empty])
    finally:
        if addopts is not None:
            os.environ["PYTEST_ADDOPTS"] = addopts
    import importlib
    import importlib.util

    if importlib.util.find_spec("pyarrow") and importlib.util.find_spec("grpc"):
        from kafkatest._ground.lean_imports import import_spark_connect_client

        import_spark_connect_client()
    import kafkatest.emulator  # noqa: F401  (the fixture's default backend)

    for name in extra:
        importlib.import_module(name)
    pytest_command()  # loaded, and the distributions' metadata read, once


@contextlib.contextmanager
def _output_discarded() -> Iterator[None]:
    null = os.open(os.devnull, os.O_WRONLY)
    saved = [os.dup(1), os.dup(2)]
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (null, *saved):
            os.close(fd)


def _fingerprint() -> dict[str, int]:
    """The modification times of every preloaded module's file and of each folder on
    sys.path (a package installed or removed changes its folder)."""
    paths = {p for p in sys.path if p and os.path.isdir(p)}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str):
            paths.add(path)
    stamps = {}
    for path in paths:
        with contextlib.suppress(OSError):
            stamps[path] = os.stat(path).st_mtime_ns
    return stamps


def _changed(stamps: dict[str, int]) -> str | None:
    for path, stamp in stamps.items():
        try:
            if os.stat(path).st_mtime_ns != stamp:
                return f"{path} changed"
        except OSError:
            return f"{path} is gone"
    return None


def serve(path: Path, idle_minutes: float, preloaded: Sequence[str]) -> None:
    """Preload, then fork a child for each request until idle, stopped or stale."""
    import gc
    import warnings

    # A forking server is what it is: Python 3.12+ warns of fork() beside the threads
    # pyarrow starts (its allocator's; it re-creates them in a child), here in the log.
    warnings.filterwarnings("ignore", message=".*fork.*", category=DeprecationWarning)
    sys.path[0] = scripts_dir()
    preload(preloaded)
    stamps = _fingerprint()
    gc.collect()
    gc.freeze()  # what was preloaded stays: children need not scan or copy it
    previous = os.umask(0o077)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    os.umask(previous)
    listener.listen(16)
    listener.setblocking(False)
    state = path.with_suffix(".json")
    write_private(
        state, json.dumps({"pid": os.getpid(), "boot": boot_id(), "python": sys.executable})
    )
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reap themselves
    signal.signal(signal.SIGTERM, _stop_serving)
    print(f"serving at {path} (pid {os.getpid()})", flush=True)
    server = _Server(listener, stamps, lambda: _remove_own(path, state), idle_minutes * 60)
    try:
        server.run()
    except _StopServing:
        print("stopped", flush=True)
    finally:
        server.close()
        _remove_own(path, state)
        listener.close()


class _StopServing(Exception):
    """SIGTERM (`kafkatest pytest-server stop`): out of the wait at once."""


def _stop_serving(_signum: int, _frame: object) -> None:
    raise _StopServing


def _remove_own(path: Path, state: Path) -> None:
    """Remove the socket and state, unless a newer server has taken their place."""
    with contextlib.suppress(OSError, ValueError):
        if json.loads(state.read_text()).get("pid") != os.getpid():
            return
    path.unlink(missing_ok=True)
    state.unlink(missing_ok=True)


@dataclass(eq=False)
class _Server:
    """The accept loop: every connection read as its bytes come (a slow or idle one
    holds nobody else's run), each within its deadline, a request forked once whole
    and checked; anything else about one connection costs that connection only."""

    listener: socket.socket
    stamps: dict[str, int]
    retire: Callable[[], None]
    idle_s: float
    selector: selectors.BaseSelector = field(init=False, default_factory=selectors.DefaultSelector)
    pending: dict[socket.socket, PendingRequest] = field(init=False, default_factory=dict)
    last_run: float = field(init=False, default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.selector.register(self.listener, selectors.EVENT_READ)

    def run(self) -> None:
        while True:
            now = time.monotonic()
            for request in [r for r in self.pending.values() if r.deadline <= now]:
                self._drop(request, f"no whole request within {READ_DEADLINE_S:.0f} s")
            idle_left = self.idle_s - (now - self.last_run)
            if idle_left <= 0 and not self.pending:
                print("idle: stopping", flush=True)
                return
            waits = [1.0, max(0.01, idle_left), *(r.deadline - now for r in self.pending.values())]
            for key, _events in self.selector.select(max(0.01, min(waits))):
                if key.fileobj is self.listener:
                    self._accept()
                elif self._progress(self.pending[key.fileobj]) == "stale":  # type: ignore[index]
                    return

    def _accept(self) -> None:
        """Take every waiting connection of this user's (up to `MAX_PENDING` at once)."""
        while len(self.pending) < MAX_PENDING:
            try:
                connection, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            try:
                credentials = connection.getsockopt(
                    socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")
                )
            except OSError:
                connection.close()
                continue
            _pid, uid, _gid = struct.unpack("3i", credentials)
            if uid != os.getuid():
                print(f"refused a connection from uid {uid}", flush=True)
                connection.close()
                continue
            connection.setblocking(False)
            request = PendingRequest(connection)
            self.pending[connection] = request
            self.selector.register(connection, selectors.EVENT_READ)
        if len(self.pending) >= MAX_PENDING:  # the rest wait in the backlog meanwhile
            self.selector.unregister(self.listener)

    def _progress(self, pending: PendingRequest) -> str:
        try:
            request = pending.read()
        except _StopServing:
            raise
        except Refused as exc:
            self._drop(pending, str(exc))
            return "refused"
        except Exception as exc:  # one connection's trouble is that connection's only
            self._drop(pending, repr(exc))
            return "refused"
        if request is None:
            return "reading"
        self._forget(pending)
        self.last_run = time.monotonic()
        try:
            return self._launch(pending, request)
        finally:
            pending.close()

    def _launch(self, pending: PendingRequest, request: dict[str, Any]) -> str:
        """When stale, leave the socket to the next server and say so; else fork the run."""
        why = _changed(self.stamps)
        if why is not None:
            print(f"stale: {why}", flush=True)
            self.retire()
            with contextlib.suppress(OSError):
                pending.connection.setblocking(True)
                pending.connection.sendall(json.dumps({"stale": why}).encode() + b"\n")
            return "stale"
        child = os.fork()
        if child == 0:  # pragma: no cover - runs in the child, which never returns
            try:
                self.listener.close()
                for other in list(self.pending.values()):
                    other.close()
                self.selector.close()
                run_child(pending.connection, pending.fds, request)
            finally:  # whatever happens, a child never returns into the server's loop
                os._exit(1)
        print(f"run {child}: pytest {' '.join(request['args'])}", flush=True)
        return "forked"

    def _forget(self, pending: PendingRequest) -> None:
        self.selector.unregister(pending.connection)
        del self.pending[pending.connection]
        if self.listener not in self.selector.get_map():
            self.selector.register(self.listener, selectors.EVENT_READ)

    def _drop(self, pending: PendingRequest, why: str) -> None:
        print(f"refused a request: {why}", flush=True)
        self._forget(pending)
        pending.close()

    def close(self) -> None:
        for pending in list(self.pending.values()):
            pending.close()
        self.pending.clear()
        self.selector.close()


if __name__ == "__main__":
    serve(Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3:])
