"""The fork server's side of a request: read within a deadline, beside others, and
checked whole before anything is forked.

The server once read one connection at a time, 10 s per read, so a client sending a
byte every 8 s held every run behind it for a minute, and a body of `[]`, `null`,
numbers for arguments or 100,000-deep JSON raised out of its loop and ended it (the
run queued behind saw its connection reset). Now every connection is read as its
bytes arrive (`PendingRequest`, driven by the server's selector), each has
`READ_DEADLINE_S` in all to send its request, and a request is a JSON object of
exactly the shape the client sends (`checked_request`) or it is refused, and the
server goes on.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from typing import Any

from kafkatest._ground import bounded_json
from kafkatest.apps.pytest_forkserver.place import HEADER, MAGIC, MAX_REQUEST

#: What a client has, from its connection, to send its whole request.
READ_DEADLINE_S = 10.0
#: Connections read at once; more wait in the listener's backlog.
MAX_PENDING = 32
_FIELDS = {"args", "cwd", "env", "umask"}


class Refused(Exception):
    """A request the server will not run; the message says why (it goes to the log)."""


class PendingRequest:
    """One connection's request as it arrives: the header with the caller's three
    descriptors, then the JSON body."""

    def __init__(self, connection: socket.socket) -> None:
        self.connection = connection
        self.deadline = time.monotonic() + READ_DEADLINE_S
        self.fds: list[int] = []
        self._length: int | None = None
        self._body = bytearray()

    def read(self) -> dict[str, Any] | None:
        """Take what has arrived (the connection is readable): the checked request once
        whole, None while more is to come; Refused when it cannot be one."""
        if self._length is None:
            header, fds, _flags, _address = socket.recv_fds(self.connection, HEADER.size, 3)
            self.fds = list(fds)
            if len(header) != HEADER.size or len(fds) != 3:
                raise Refused("a malformed request (its header and descriptors come together)")
            magic, length = HEADER.unpack(header)
            if magic != MAGIC or length > MAX_REQUEST:
                raise Refused("a malformed request header")
            self._length = length
        else:
            chunk = self.connection.recv(min(1 << 16, self._length - len(self._body)))
            if not chunk:
                raise Refused("the client left before its whole request came")
            self._body += chunk
        if len(self._body) < self._length:
            return None
        return checked_request(bytes(self._body))

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = []
        self.connection.close()


def checked_request(body: bytes) -> dict[str, Any]:
    """The request `client._send_request` makes, or Refused: {"args": [str...], "cwd":
    str, "env": {str: str}, "umask": 0..0o777}."""
    try:
        request = bounded_json.loads(body)
    except bounded_json.JsonRefused as exc:
        raise Refused(f"a request that is not JSON it reads: {exc}") from None
    if not isinstance(request, dict) or set(request) != _FIELDS:
        raise Refused(f"a request must be an object of {sorted(_FIELDS)}")
    args, cwd, env, umask = request["args"], request["cwd"], request["env"], request["umask"]
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise Refused("a request's args must be a list of strings")
    if not isinstance(cwd, str) or not cwd:
        raise Refused("a request's cwd must be a path")
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        raise Refused("a request's env must map names to strings")
    if isinstance(umask, bool) or not isinstance(umask, int) or not 0 <= umask <= 0o777:
        raise Refused("a request's umask must be a file mode mask, 0 to 0o777")
    return request
