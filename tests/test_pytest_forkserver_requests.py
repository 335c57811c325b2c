"""`kafkatest pytest`'s fork server and what its own user may send it (issue 44): any
request, however malformed, is refused alone and the next run is served; a slow or idle
caller holds no other run; its files are its user's alone."""

from __future__ import annotations

import contextlib
import stat
from pathlib import Path

from tests.test_pytest_forkserver import (  # noqa: F401 - the fixture, and helpers
    _kafkatest_pytest,
    _servers,
    forkserver_env,
)


def _raw_request(socket_file: str, header: bytes, body: bytes, fds: bool = True) -> bytes:
    """Send one request as the client's user would, however malformed; what came back."""
    import socket

    with socket.socket(socket.AF_UNIX) as connection:
        connection.settimeout(30)
        connection.connect(socket_file)
        if fds:
            socket.send_fds(connection, [header], [0, 1, 2])
        else:
            connection.sendall(header)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            connection.sendall(body)
        answer = b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := connection.recv(4096):
                answer += chunk
        return answer


def _header(body: bytes) -> bytes:
    from kafkatest.apps.pytest_forkserver.place import HEADER, MAGIC

    return HEADER.pack(MAGIC, len(body))


MALFORMED_BODIES = [
    b"[]",
    b"null",
    b"12",
    b'{"args": [1, 2], "cwd": "/", "env": {}, "umask": 18}',
    b'{"args": [], "cwd": "/", "env": {"A": 1}, "umask": 18}',
    b'{"args": [], "cwd": "/", "env": {}, "umask": -1}',
    b'{"args": [], "cwd": "/", "env": {}}',
    b"[" * 100_000 + b"]" * 100_000,
    b'{"args": ' + b"9" * 5_000 + b"}",
    b"\xff\xfe not text",
]


def test_no_request_its_user_can_send_ends_the_server(
    tmp_path: Path,
    forkserver_env: dict[str, str],  # noqa: F811
) -> None:
    """Issue 44: bodies `[]`, `null`, numbers for arguments or 100,000-deep JSON ended
    the server, and the run queued behind lost its connection. Each is refused, alone,
    and the next run is served by the same server."""
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _kafkatest_pytest(empty, forkserver_env).returncode == 5  # no tests collected
    (server,) = _servers(forkserver_env)
    for body in MALFORMED_BODIES:
        assert _raw_request(server["socket"], _header(body), body) == b""
    assert _raw_request(server["socket"], b"KTP9\0\0\0\2", b"{}") == b""
    assert _raw_request(server["socket"], _header(b"{}"), b"{}", fds=False) == b""
    assert _raw_request(server["socket"], b"KTP1\xff\xff\xff\xff", b"{}") == b""

    assert _kafkatest_pytest(empty, forkserver_env).returncode == 5
    assert [s["pid"] for s in _servers(forkserver_env)] == [server["pid"]]
    log = Path(server["socket"]).with_suffix(".log").read_text()
    assert log.count("refused a request") == len(MALFORMED_BODIES) + 3
    assert "Traceback" not in log


def test_a_slow_or_idle_client_holds_no_other_run(
    tmp_path: Path,
    forkserver_env: dict[str, str],  # noqa: F811
) -> None:
    """A client that opens connections and sends nothing, or drips its request a byte
    at a time, once held every run behind it (a byte every 8 s: 63 s). Connections are
    read side by side now, each given 10 s in all: a run is served while they hang on."""
    import socket
    import threading

    empty = tmp_path / "empty"
    empty.mkdir()
    assert _kafkatest_pytest(empty, forkserver_env).returncode == 5
    (server,) = _servers(forkserver_env)
    stop = threading.Event()
    idle = [socket.socket(socket.AF_UNIX) for _ in range(3)]
    for connection in idle:
        connection.connect(server["socket"])
    dripping = socket.socket(socket.AF_UNIX)
    dripping.connect(server["socket"])
    socket.send_fds(dripping, [_header(b" " * 1_000_000)], [0, 1, 2])

    def drip() -> None:
        with contextlib.suppress(OSError):
            while not stop.wait(1.0):
                dripping.sendall(b" ")

    dripper = threading.Thread(target=drip, daemon=True)
    dripper.start()
    try:
        served = _kafkatest_pytest(empty, forkserver_env)
        assert served.returncode == 5, served.stdout + served.stderr
        assert dripper.is_alive()  # still dripping when the run was served
    finally:
        stop.set()
        dripper.join()
        for connection in (*idle, dripping):
            connection.close()
    assert [s["pid"] for s in _servers(forkserver_env)] == [server["pid"]]


def test_its_files_are_its_users_alone(
    tmp_path: Path,
    forkserver_env: dict[str, str],  # noqa: F811
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _kafkatest_pytest(empty, forkserver_env).returncode == 5
    (server,) = _servers(forkserver_env)
    socket_file = Path(server["socket"])
    for suffix in (".json", ".log", ".lock"):
        assert stat.S_IMODE(socket_file.with_suffix(suffix).stat().st_mode) == 0o600, suffix
