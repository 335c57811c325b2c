"""Child processes that die with the test run, and free loopback ports.

A broker JVM left behind by a crashed or interrupted test run would hold ports and
memory on CI; the kernel's parent-death signal (Linux) plus an atexit hook make sure
it goes with us.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import queue
import random
import signal
import socket
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

_PR_SET_PDEATHSIG = 1
_live: weakref.WeakSet[subprocess.Popen[bytes]] = weakref.WeakSet()


#: Where `free_port` looks first: above the registered services most machines run,
#: below Linux's default ephemeral range (32768-60999).
_LISTEN_FROM = 20000


def _ephemeral_start() -> int:
    """The first port the OS hands to outgoing connections (Linux's setting, else 32768)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory of process `pid` (this one by default) in MiB, to 0.1 (NaN where
    /proc does not say): the benchmark's and the fuzzer's memory figure."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on right now, outside the range the OS gives to outgoing
    connections when it can be.

    A broker that restarts binds the same port again. Were that port an ephemeral one,
    a client reconnecting to the stopped broker in a loop could be handed it as its own
    local port, connect to itself (TCP's simultaneous open) and hold it: the broker
    then fails to start with "Address already in use" (seen in CI, three jobs at once).
    """
    top = _ephemeral_start()
    if top - _LISTEN_FROM >= 1000:
        for candidate in random.sample(range(_LISTEN_FROM, top), 50):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                try:
                    sock.bind((host, candidate))
                except OSError:
                    continue
                return candidate
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    # Own process group: Ctrl-C in a terminal reaches pytest, which then stops us
    # cleanly, instead of killing the broker under a test that is still running.
    os.setpgrp()


class _Spawner:
    """One daemon thread that forks every child.

    The kernel sends the parent-death signal when the *thread* that forked the
    child ends, not the process: a broker restarted from a fault trigger's thread
    died as soon as that thread finished. This thread lives until the process
    exits, so the signal means what it should.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def run(self, job: Callable[[], Any]) -> Any:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._serve, name="kafkatest-spawner", daemon=True
                )
                self._thread.start()
        done: Future[Any] = Future()
        self._jobs.put((job, done))
        return done.result()

    def _serve(self) -> None:
        while True:
            job, done = self._jobs.get()
            try:
                done.set_result(job())
            except BaseException as exc:
                done.set_exception(exc)


_spawner = _Spawner()


def spawn(
    command: Sequence[str], log_path: Path, cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start `command` with output to `log_path`, tied to this process's lifetime
    (`env`: variables set on top of this process's environment)."""
    process: subprocess.Popen[bytes] = _spawner.run(lambda: _popen(command, log_path, cwd, env))
    _live.add(process)
    return process


def _popen(
    command: Sequence[str], log_path: Path, cwd: Path, env: Mapping[str, str] | None
) -> subprocess.Popen[bytes]:
    log = open(log_path, "ab")  # noqa: SIM115 - the child owns it; closed in terminate()
    process = subprocess.Popen(
        list(command),
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env=None if env is None else {**os.environ, **env},
        preexec_fn=_die_with_parent,
    )
    log.close()
    return process


def terminate(process: subprocess.Popen[bytes], grace_s: float = 20.0) -> None:
    """SIGTERM, then SIGKILL if the process does not exit within `grace_s`."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
    _live.discard(process)


def kill_now(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL: what a crash looks like to clients (no clean shutdown)."""
    if process.poll() is None:
        process.kill()
        process.wait(10)
    _live.discard(process)


@atexit.register
def _kill_leftovers() -> None:
    for process in list(_live):
        with contextlib.suppress(Exception):
            terminate(process, grace_s=5.0)


def warnings_tail(path: Path, lines: int = 20) -> str:
    """The last `lines` WARN, ERROR or FATAL entries of a log4j log (with the lines that
    continue them, such as a trace's first frames cut to 5), for failure reports: a
    Kafka broker logs tens of INFO lines a second, which bury what went wrong."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    entries: list[list[str]] = []
    keep = False
    for line in text.splitlines():
        if line.startswith("["):  # a new entry: "[time] LEVEL message"
            keep = any(f"] {level} " in line for level in ("WARN", "ERROR", "FATAL"))
            if keep:
                entries.append([line])
        elif keep and len(entries[-1]) < 6:
            entries[-1].append(line)
    return "\n".join(line for entry in entries[-lines:] for line in entry)


def lines_naming(path: Path, names: Sequence[str], lines: int = 40, width: int = 400) -> str:
    """The last `lines` lines of a log that name one of `names` (a failed test's topics),
    each cut to `width` characters: where a Kafka broker says what it did to those
    partitions (created, led, truncated, deleted), which a lost record usually comes to."""
    if not names:
        return ""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    found = [line for line in text.splitlines() if any(name in line for name in names)]
    return "\n".join(
        line if len(line) <= width else line[: width - 1] + "…" for line in found[-lines:]
    )


def tail(path: Path, lines: int = 60) -> str:
    """The last `lines` lines of a log file, for failure reports."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])
