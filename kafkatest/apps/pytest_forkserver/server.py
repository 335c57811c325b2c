"""The fork server: preload, then fork a child per request until idle, stopped or
stale. `python -m kafkatest.apps.pytest_forkserver.server SOCKET IDLE_MINUTES [MODULE...]`
is how a client starts it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from kafkatest.apps.pytest_forkserver.child import run_child
from kafkatest.apps.pytest_forkserver.place import (
    HEADER,
    MAGIC,
    MAX_REQUEST,
    pytest_command,
    scripts_dir,
)
from kafkatest.tempdirs import boot_id


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
        from kafkatest.lean_imports import import_spark_connect_client

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
    state = path.with_suffix(".json")
    state.write_text(json.dumps({"pid": os.getpid(), "boot": boot_id(), "python": sys.executable}))
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reap themselves
    signal.signal(signal.SIGTERM, _stop_serving)
    print(f"serving at {path} (pid {os.getpid()})", flush=True)
    last_run = time.monotonic()
    try:
        while True:
            listener.settimeout(
                min(1.0, max(0.01, idle_minutes * 60 - (time.monotonic() - last_run)))
            )
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                if time.monotonic() - last_run >= idle_minutes * 60:
                    print("idle: stopping", flush=True)
                    return
                continue
            last_run = time.monotonic()
            if _handle(connection, listener, stamps, lambda: _remove_own(path, state)) == "stale":
                return
    except _StopServing:
        print("stopped", flush=True)
    finally:
        _remove_own(path, state)
        listener.close()


class _StopServing(Exception):
    """SIGTERM (`kafkatest pytest-server stop`): out of accept() at once."""


def _stop_serving(_signum: int, _frame: object) -> None:
    raise _StopServing


def _remove_own(path: Path, state: Path) -> None:
    """Remove the socket and state, unless a newer server has taken their place."""
    with contextlib.suppress(OSError, ValueError):
        if json.loads(state.read_text()).get("pid") != os.getpid():
            return
    path.unlink(missing_ok=True)
    state.unlink(missing_ok=True)


def _handle(
    connection: socket.socket,
    listener: socket.socket,
    stamps: dict[str, int],
    retire: Callable[[], None],
) -> str:
    """Take one request: refuse another user's; when stale, leave the socket to the
    next server and say so; else fork the run."""
    fds: list[int] = []
    try:
        credentials = connection.getsockopt(
            socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")
        )
        _pid, uid, _gid = struct.unpack("3i", credentials)
        if uid != os.getuid():
            print(f"refused a connection from uid {uid}", flush=True)
            return "refused"
        connection.settimeout(10.0)
        header, fds, _flags, _address = socket.recv_fds(connection, HEADER.size, 3)
        magic, length = HEADER.unpack(header) if len(header) == HEADER.size else (b"", 0)
        if magic != MAGIC or len(fds) != 3 or length > MAX_REQUEST:
            print("refused a malformed request", flush=True)
            return "refused"
        body = bytearray()
        while len(body) < length:
            chunk = connection.recv(min(1 << 16, length - len(body)))
            if not chunk:
                return "refused"
            body += chunk
        request = json.loads(body)
        why = _changed(stamps)
        if why is not None:
            print(f"stale: {why}", flush=True)
            retire()
            connection.sendall(json.dumps({"stale": why}).encode() + b"\n")
            return "stale"
        child = os.fork()
        if child == 0:  # pragma: no cover - runs in the child, which never returns
            listener.close()
            try:
                run_child(connection, fds, request)
            finally:  # whatever happens, a child never returns into the server's loop
                os._exit(1)
        print(f"run {child}: pytest {' '.join(request['args'])}", flush=True)
        return "forked"
    except (OSError, ValueError, KeyError) as exc:
        print(f"refused a request: {exc!r}", flush=True)
        return "refused"
    finally:
        for fd in fds:
            os.close(fd)
        connection.close()


if __name__ == "__main__":
    serve(Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3:])
