"""The `kafkatest pytest` side: find or start the environment's server, hand it the
terminal and the request, pass signals on, and exit with the run's status. Standard
library only: every import here is paid by every run."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from kafkatest._ground.tempdirs import boot_id, process_alive
from kafkatest.apps.pytest_forkserver.place import (
    FORK_SERVER_PLATFORM,
    FORWARDED_SIGNALS,
    HEADER,
    MAGIC,
    START_TIMEOUT_S,
    ForkServerSettings,
    ForkServerUnavailable,
    private_file,
    pytest_command,
    server_key,
    servers_dir,
    socket_path,
)


def run(args: Sequence[str]) -> int:
    """Run pytest with `args` in a child of this environment's fork server (started
    when none runs), or here when that cannot be done (the reason printed once)."""
    try:
        return _run_forked(list(args))
    except ForkServerUnavailable as why:
        print(f"kafkatest pytest: running pytest without its fork server: {why}", file=sys.stderr)
        return _run_here(list(args))


def _run_here(args: list[str]) -> int:
    """pytest in this process, as the `pytest` command runs it."""
    sys.argv = ["pytest", *args]
    return int(pytest_command()())


def _run_forked(args: list[str]) -> int:
    if not FORK_SERVER_PLATFORM:
        raise ForkServerUnavailable(f"it runs on Linux only, not on {sys.platform}")
    environ = dict(os.environ)
    settings = ForkServerSettings.read(environ)
    path = socket_path(server_key(environ, settings))
    for attempt in range(2):
        connection = _connect(path) or _start_server(path, environ, settings)
        answer = _send_request(connection, args, environ)
        if "stale" in answer:  # the server has exited: the next one preloads anew
            connection.close()
            if attempt == 0:
                continue
            raise ForkServerUnavailable(f"its preloaded modules keep changing ({answer['stale']})")
        return _follow(connection, int(answer["pid"]))
    raise AssertionError("unreachable")


def _connect(path: Path) -> socket.socket | None:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        connection.close()
        return None
    return connection


def _start_server(
    path: Path, environ: dict[str, str], settings: ForkServerSettings
) -> socket.socket:
    """Start this environment's server (one client at a time) and connect to it."""
    import fcntl

    with os.fdopen(private_file(path.with_suffix(".lock"), "a"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        connection = _connect(path)  # another client may have started it meanwhile
        if connection is not None:
            return connection
        path.unlink(missing_ok=True)  # a socket a dead server left (a crash, a reboot)
        log = path.with_suffix(".log")
        with os.fdopen(private_file(log, "w"), "w") as log_file:
            server = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "kafkatest.apps.pytest_forkserver.server",
                    str(path),
                    str(settings.idle_minutes),
                    *settings.preload,
                ],
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                cwd=path.parent,
                env=environ,
                start_new_session=True,  # not in the terminal's group: Ctrl-C is the run's
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            connection = _connect(path)
            if connection is not None:
                return connection
            if server.poll() is not None:
                tail = log.read_text(errors="replace")[-2000:]
                raise ForkServerUnavailable(f"it could not start:\n{tail}")
            time.sleep(0.02)
        server.kill()
        raise ForkServerUnavailable(f"it did not start within {START_TIMEOUT_S:.0f} s (log: {log})")


def _send_request(connection: socket.socket, args: list[str], environ: dict[str, str]) -> dict:
    umask = os.umask(0)
    os.umask(umask)
    body = json.dumps({"args": args, "cwd": os.getcwd(), "env": environ, "umask": umask}).encode()
    with _standard_descriptors() as fds:
        socket.send_fds(connection, [HEADER.pack(MAGIC, len(body))], fds)
    connection.sendall(body)
    reader = connection.makefile("rb")
    line = reader.readline()
    if not line:
        raise ForkServerUnavailable("it closed the connection before the run began")
    return dict(json.loads(line))


@contextlib.contextmanager
def _standard_descriptors() -> Iterator[list[int]]:
    """Descriptors 0-2, with /dev/null for any this process was started without."""
    opened: list[int] = []
    fds = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:
            opened.append(os.open(os.devnull, os.O_RDWR))
            fds.append(opened[-1])
    try:
        yield fds
    finally:
        for fd in opened:
            os.close(fd)


def _follow(connection: socket.socket, child: int) -> int:
    """Pass signals on to the run until it reports its exit status."""

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    for signum in FORWARDED_SIGNALS:
        signal.signal(signum, forward)
    line = connection.makefile("rb").readline()  # signals forwarded meanwhile
    if not line:
        print(
            f"kafkatest pytest: the run (pid {child}) ended without a result: it was "
            "killed or crashed",
            file=sys.stderr,
        )
        return 1
    return int(json.loads(line)["exit"])


def running_servers(folder: Path | None = None) -> list[dict]:
    """This user's servers that live (a state left by a dead one is removed), in the
    cache's folder or `folder`."""
    found = []
    folder = folder or servers_dir()
    for state in sorted(folder.glob("*.json")):
        try:
            recorded = json.loads(state.read_text())
            pid = int(recorded["pid"])
        except (OSError, ValueError, KeyError):
            continue
        living = recorded.get("boot") in ("", boot_id()) and process_alive(pid)
        if not living:
            state.unlink(missing_ok=True)
            state.with_suffix(".sock").unlink(missing_ok=True)
            continue
        found.append({**recorded, "socket": str(state.with_suffix(".sock"))})
    return found


def stop_servers(folder: Path | None = None, timeout_s: float = 10.0) -> list[int]:
    """Stop this user's servers (runs in progress go on); the pids stopped."""
    pids = [int(recorded["pid"]) for recorded in running_servers(folder)]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while any(process_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    return pids
