"""The standalone emulator's control interface: HTTP with JSON, loopback by default.

CI suites outside pytest (or outside Python) inject the same faults as the
`Faults` API by POSTing to ``/faults/<action>`` with a JSON object of
parameters; ``GET /faults`` lists active faults, ``DELETE /faults`` clears them
and ``DELETE /faults/<id>`` removes the one with that id. Answers are ``{"ok":
true, "result": ...}`` or ``{"ok": false, "error": ...}`` with a 4xx status for
a bad request or a fault that cannot fire (400, with the same message the
`Faults` API raises), an unknown path or fault id (404) or a fault the backend
cannot do (409); a failing fault never takes the emulator down.

A web page must not be able to drive it (a browser lets any site send requests
to localhost): requests that change anything need ``Content-Type:
application/json`` (a page can only send that after a CORS preflight, which is
never answered), the ``Host`` header must name the address it listens on (so a
DNS-rebinding page, whose Host is its own domain, is refused), an ``Origin``
other than its own is refused, and bodies need an exact, bounded
``Content-Length``. See `ControlServer.refusal` for the rules.
"""

from __future__ import annotations

import json
import logging
import threading
from email.message import Message
from http import HTTPStatus
from typing import Any

from kafkatest._ground import bounded_json
from kafkatest.errors import BrokerError
from kafkatest.faults.api import Faults
from kafkatest.faults.control_actions import BadRequest, UnknownFault, checked_params, perform
from kafkatest.faults.validation import InvalidFault
from kafkatest.loopback_http import LoopbackServer

log = logging.getLogger("kafkatest.faults")

#: Bodies larger than this are refused: parameters are a few small fields.
MAX_BODY_BYTES = 1 << 16
LOOPBACK = "127.0.0.1"
#: Seconds a client may take to send its request (a stalled one holds a thread).
REQUEST_TIMEOUT_S = 10.0
#: A fault id has fewer digits than this (more cannot name one).
_MAX_ID_DIGITS = 18
#: Methods that change something: they need a JSON content type even without a body.
CHANGING = ("POST", "DELETE", "PUT", "PATCH")


class ControlServer(LoopbackServer):
    """Serves `faults` on `host`:`port` (0: any free port) from a daemon thread."""

    thread_name = "kafkatest-fault-control"
    log = log
    label = "control"
    access_level = logging.INFO
    request_timeout_s = REQUEST_TIMEOUT_S
    max_body_bytes = MAX_BODY_BYTES
    what = "control interface"

    def __init__(self, faults: Faults, port: int = 0, host: str = LOOPBACK) -> None:
        self.faults = faults
        self._lock = threading.Lock()
        super().__init__(host, port)

    @property
    def address(self) -> str:
        host, port = self._http.server_address[:2]
        if isinstance(host, (bytes, bytearray)):
            host = host.decode()
        return f"{host}:{port}"

    def content_refusal(self, method: str, headers: Message) -> tuple[int, str] | None:
        """A POST needs a body, and a change or a body JSON in UTF-8."""
        lengths = headers.get_all("Content-Length") or []
        length = int(lengths[0]) if lengths else 0
        if method == "POST" and not lengths:
            return (
                HTTPStatus.BAD_REQUEST,
                "POST needs a Content-Length header and a JSON body ({} for no parameters)",
            )
        if method in CHANGING or length > 0:
            kind = headers.get_content_type()
            charset = headers.get_param("charset")
            raw = headers.get("Content-Type")
            if (
                raw is None
                or kind != "application/json"
                or (isinstance(charset, str) and charset.lower() not in ("utf-8", "utf8"))
            ):
                return (
                    HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                    f"{method} needs Content-Type: application/json, not {raw!r}",
                )
        return None

    def refused_answer(self, status: int, reason: str) -> dict[str, Any]:
        return _error(reason)

    def encode(self, answer: Any) -> bytes:
        return json.dumps(answer).encode()

    def handle(self, method: str, path: str, body: bytes) -> tuple[int, dict[str, Any]]:
        """(status, JSON answer) for one request; the HTTP layer only moves bytes."""
        parts = [p for p in path.split("?")[0].split("/") if p]
        if not parts or parts[0] != "faults" or len(parts) > 2:
            return HTTPStatus.NOT_FOUND, _error(f"no such path {path!r}; use /faults[/<action>]")
        try:
            action, params = self._route(method, parts[1:], body)
            checked = checked_params(action, params)
            with self._lock:  # one fault at a time: they wait for the broker to agree
                result = perform(self.faults, action, checked)
        except (BadRequest, InvalidFault) as exc:
            return HTTPStatus.BAD_REQUEST, _error(str(exc))
        except UnknownFault as exc:
            return HTTPStatus.NOT_FOUND, _error(str(exc))
        except BrokerError as exc:
            return HTTPStatus.CONFLICT, _error(str(exc))
        except Exception as exc:
            log.exception("fault control request %s %s failed", method, path)
            return HTTPStatus.INTERNAL_SERVER_ERROR, _error(f"{type(exc).__name__}: {exc}")
        return HTTPStatus.OK, {"ok": True, "result": result}

    @staticmethod
    def _route(method: str, rest: list[str], body: bytes) -> tuple[str, object]:
        if method == "GET" and not rest:
            return "list", {}
        if method == "DELETE":
            if not rest:
                return "clear", {}
            if rest[0].isdigit() and len(rest[0]) <= _MAX_ID_DIGITS:
                return "remove", {"id": int(rest[0])}
            raise BadRequest(f"DELETE /faults/{rest[0][:40]}: expected a fault id")
        if method == "POST" and rest:
            try:
                params = bounded_json.loads(body or b"{}")
            except bounded_json.JsonRefused as exc:
                raise BadRequest(f"the body is not JSON kafkatest reads: {exc}") from None
            return rest[0], params
        raise BadRequest(f"{method} /faults{'/' + rest[0] if rest else ''} is not an action")


def _error(message: str) -> dict[str, Any]:
    return {"ok": False, "error": message}
