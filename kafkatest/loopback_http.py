"""The checks every loopback HTTP server of kafkatest makes, and its one way to answer.

A browser lets any web page send requests to localhost, so a server meant for a
test suite (the fault control interface, the Schema Registry) must refuse what a
page could send: a ``Host`` that does not name it (DNS rebinding), a foreign
``Origin``, bodies without an exact, bounded ``Content-Length``. Both servers
share these rules, and the serving itself (`LoopbackServer`), from here, so they
cannot drift apart.
"""

from __future__ import annotations

import ipaddress
import logging
import threading
from abc import ABC, abstractmethod
from email.message import Message
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from kafkatest._ground.exposure import is_loopback, is_wildcard


def host_allowed(host_header: str, listen_host: str, port: int) -> bool:
    """Whether a ``Host`` header names this server.

    Accepted: the address it listens on; ``localhost`` when that is loopback (or a
    wildcard); any IP literal when it listens on a wildcard. A domain name other
    than localhost never is: that is what a DNS-rebinding page sends.
    """
    name, _, port_text = host_header.strip().rpartition(":")
    if (
        not name
        or "]" in port_text
        or not (port_text.isascii() and port_text.isdigit())
        or len(port_text) > 5  # a port; and int() refuses a few thousand digits
        or int(port_text) != port
    ):
        return False
    name = name.strip("[]").lower()
    if name == listen_host.strip("[]").lower():
        return True
    if name == "localhost":
        return is_wildcard(listen_host) or is_loopback(listen_host)
    if is_wildcard(listen_host):
        try:
            ipaddress.ip_address(name)
        except ValueError:
            return False
        return True
    return False


def browser_refusal(
    headers: Message, listen_host: str, port: int, max_body: int, what: str = "control interface"
) -> tuple[int, str] | None:
    """(status, reason) when a request's Host, Origin or framing must be refused: the
    checks every loopback HTTP server of kafkatest makes so a web page cannot drive it."""
    hosts = headers.get_all("Host") or []
    if len(hosts) != 1:
        return HTTPStatus.BAD_REQUEST, "send exactly one Host header"
    if not host_allowed(hosts[0], listen_host, port):
        return (
            HTTPStatus.MISDIRECTED_REQUEST,
            f"Host {hosts[0]!r} is not this {what} ({listen_host}:{port}); "
            "requests for another name are refused, as a web page's would be",
        )
    origin = headers.get("Origin")
    if origin is not None and not (
        origin.startswith("http://") and host_allowed(origin[7:], listen_host, port)
    ):
        return HTTPStatus.FORBIDDEN, f"requests from web pages (Origin {origin!r}) are refused"
    if headers.get("Transfer-Encoding") is not None:
        return HTTPStatus.BAD_REQUEST, "send the body with a Content-Length, not chunked"
    lengths = headers.get_all("Content-Length") or []
    if len(set(lengths)) > 1:
        return HTTPStatus.BAD_REQUEST, f"conflicting Content-Length headers {lengths}"
    if lengths and not (lengths[0].isascii() and lengths[0].isdigit()):
        return HTTPStatus.BAD_REQUEST, f"malformed Content-Length {lengths[0]!r}"
    if lengths and len(lengths[0].lstrip("0")) > len(str(max_body)):
        digits = len(lengths[0].lstrip("0"))
        return (
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
            f"a body of a {digits}-digit number of bytes is over the limit of {max_body}",
        )
    length = int(lengths[0]) if lengths else 0
    if length > max_body:
        return (
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
            f"body of {length} bytes is over the limit of {max_body}",
        )
    return None


def send_answer(
    handler: BaseHTTPRequestHandler, status: int, data: bytes, content_type: str
) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class LoopbackServer(ABC):
    """An HTTP server on `host`:`port` (0: any free port), served from a daemon thread:
    each request is checked by `refusal` before its body is read, then answered by
    `handle`, both as JSON. A subclass says what it serves and how it answers."""

    #: The serving thread's name.
    thread_name = "kafkatest-http"
    #: Where refusals (WARNING) and the access log (at `access_level`) go, and the
    #: prefix of those lines.
    log = logging.getLogger("kafkatest")
    label = "http"
    access_level = logging.DEBUG
    content_type = "application/json"
    protocol_version = "HTTP/1.0"
    #: Seconds a client may take to send its request (a stalled one holds a thread).
    request_timeout_s = 10.0
    #: Bodies larger than this are refused; `what` names the server in refusals.
    max_body_bytes = 1 << 16
    what = "server"

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self._http = ThreadingHTTPServer((host, port), self._handler_class())
        self._http.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._http.serve_forever, name=self.thread_name, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        if self._thread is not None:
            self._http.shutdown()
            self._thread.join(10)
            self._thread = None
        self._http.server_close()

    def refusal(self, method: str, headers: Message) -> tuple[int, str] | None:
        """(status, reason) when a request must be refused before its body is read: what
        a web page could send (`browser_refusal`), then the server's `content_refusal`."""
        refused = browser_refusal(headers, self.host, self.port, self.max_body_bytes, self.what)
        return refused if refused is not None else self.content_refusal(method, headers)

    def content_refusal(self, method: str, headers: Message) -> tuple[int, str] | None:
        """(status, reason) when a request's method and content type do not go together."""
        return None

    @abstractmethod
    def handle(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        """(status, answer) for one request; the HTTP layer only moves bytes."""

    def refused_answer(self, status: int, reason: str) -> Any:
        return {"error": reason}

    @abstractmethod
    def encode(self, answer: Any) -> bytes:
        """The answer's body as bytes (JSON for both servers, each its own content type)."""

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            timeout = server.request_timeout_s
            protocol_version = server.protocol_version

            def _serve(self) -> None:
                refused = server.refusal(self.command, self.headers)
                if refused is not None:
                    status, answer = refused[0], server.refused_answer(*refused)
                    server.log.warning(
                        "%s refused %s %s: %s", server.label, self.command, self.path, refused[1]
                    )
                    self.close_connection = True
                else:
                    length = int(self.headers.get("Content-Length") or 0)
                    body = self.rfile.read(length) if length > 0 else b""
                    if len(body) < length:
                        self.close_connection = True
                        return  # the client went away mid-body: nobody to answer
                    status, answer = server.handle(self.command, self.path, body)
                send_answer(self, status, server.encode(answer), server.content_type)

            do_GET = do_POST = do_DELETE = do_PUT = _serve

            def log_message(self, format: str, *args: Any) -> None:
                server.log.log(server.access_level, "%s %s", server.label, format % args)

        return Handler
