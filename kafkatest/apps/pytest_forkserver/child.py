"""A forked run: become the caller's pytest (its descriptors, directory, environment,
umask and arguments), report the exit status, and end without returning into the
server."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import threading
import time

from kafkatest.apps.pytest_forkserver.place import (
    FORWARDED_SIGNALS,
    ORPHAN_GRACE_S,
    pytest_command,
    scripts_dir,
)


def run_child(connection: socket.socket, fds: list[int], request: dict) -> None:
    """Become the caller's pytest run, report its exit status, and end."""
    import atexit

    code = 1
    finished = threading.Event()
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        time.tzset()  # the caller's TZ
        _rebind_standard_streams()
        os.umask(int(request["umask"]))
        sys.argv = [os.path.join(scripts_dir(), "pytest"), *request["args"]]
        connection.settimeout(None)  # the server's bound was for reading the request
        connection.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
        threading.Thread(
            target=_end_when_orphaned,
            args=(connection, finished),
            daemon=True,
            name="kafkatest-client",
        ).start()
        code = int(pytest_command()())
    except SystemExit as exit_:
        code = 0 if exit_.code is None else exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:  # reported; the child must still report its end and exit
        import traceback

        traceback.print_exc()
    finally:
        finished.set()  # the client closing its end after this is not an interruption
        with contextlib.suppress(BaseException):
            atexit._run_exitfuncs()  # the preloaded modules' too, as at any exit
        signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED_SIGNALS)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        with contextlib.suppress(OSError):
            connection.sendall(json.dumps({"exit": code}).encode() + b"\n")
        os._exit(code)


def _rebind_standard_streams() -> None:
    """Standard streams on the caller's descriptors, buffered as Python buffers them
    for those files (line-buffered on a terminal)."""
    encoding, _, errors = (os.environ.get("PYTHONIOENCODING") or "").partition(":")
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    import io

    opened = {}
    for fd, mode in ((0, "rb"), (1, "wb"), (2, "wb")):
        binary = open(fd, mode, closefd=False)  # noqa: SIM115 - the process's streams now
        opened[fd] = io.TextIOWrapper(
            binary,
            encoding=encoding or None,
            errors=(errors or None) if fd != 2 else (errors or "backslashreplace"),
            line_buffering=fd == 2 or (fd == 1 and os.isatty(1)),
            write_through=unbuffered and fd != 0,
        )
    sys.stdin, sys.stdout, sys.stderr = opened[0], opened[1], opened[2]


def _end_when_orphaned(connection: socket.socket, finished: threading.Event) -> None:
    """The client is the run's face: when it is gone (killed, its terminal closed),
    interrupt the run as Ctrl-C would, and end it if it does not stop."""
    with contextlib.suppress(OSError):
        while connection.recv(1024):
            pass
    if finished.is_set():
        return
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(ORPHAN_GRACE_S)
    os.kill(os.getpid(), signal.SIGTERM)
