"""The standalone emulator's control interface: HTTP with JSON, loopback only.

CI suites outside pytest (or outside Python) inject the same faults as the
`Faults` API by POSTing to ``/faults/<action>`` with a JSON object of
parameters; ``GET /faults`` lists active faults, ``DELETE /faults`` clears them.
Answers are ``{"ok": true, "result": ...}`` or ``{"ok": false, "error": ...}``
with a 4xx status for a bad request (400), an unknown path (404) or a fault the
backend cannot do (409); a failing fault never takes the emulator down.
"""

from __future__ import annotations

import json
import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from kafkatest.errors import BrokerError
from kafkatest.faults.api import Faults
from kafkatest.faults.control_actions import BadRequest, checked_params, perform

log = logging.getLogger("kafkatest.faults")

#: Bodies larger than this are refused: parameters are a few small fields.
MAX_BODY_BYTES = 1 << 16
LOOPBACK = "127.0.0.1"


class ControlServer:
    """Serves `faults` on loopback port `port` (0: any free port) from a daemon thread."""

    def __init__(self, faults: Faults, port: int = 0) -> None:
        self.faults = faults
        self._lock = threading.Lock()
        self._http = ThreadingHTTPServer((LOOPBACK, port), self._handler_class())
        self._http.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> str:
        host, port = self._http.server_address[:2]
        if isinstance(host, (bytes, bytearray)):
            host = host.decode()
        return f"{host}:{port}"

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._http.serve_forever, name="kafkatest-fault-control", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        if self._thread is not None:
            self._http.shutdown()
            self._thread.join(10)
            self._thread = None
        self._http.server_close()

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
        except BadRequest as exc:
            return HTTPStatus.BAD_REQUEST, _error(str(exc))
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
            if rest[0].isdigit():
                return "remove", {"id": int(rest[0])}
            raise BadRequest(f"DELETE /faults/{rest[0]}: expected a fault id")
        if method == "POST" and rest:
            try:
                params = json.loads(body or b"{}")
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise BadRequest(f"the body is not JSON: {exc}") from None
            return rest[0], params
        raise BadRequest(f"{method} /faults{'/' + rest[0] if rest else ''} is not an action")

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                status: int
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY_BYTES:
                    status, answer = HTTPStatus.REQUEST_ENTITY_TOO_LARGE, _error("body too large")
                else:
                    body = self.rfile.read(length) if length > 0 else b""
                    status, answer = server.handle(self.command, self.path, body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = do_PUT = _serve

            def log_message(self, format: str, *args: Any) -> None:
                log.info("control %s", format % args)

        return Handler


def _error(message: str) -> dict[str, Any]:
    return {"ok": False, "error": message}
