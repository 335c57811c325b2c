"""HTTP for the registry on the stdlib, loopback by default, from a daemon thread.

The same browser hardening as the fault control interface (see
`kafkatest.loopback_http`): a web page may not drive a server on localhost, so
the ``Host`` must name this server, a foreign ``Origin`` is refused, bodies need an
exact, bounded ``Content-Length`` and changes need a JSON content type (Confluent's
``application/vnd.schemaregistry.v1+json`` or plain ``application/json``), which a page
can only send after a CORS preflight that is never answered.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from email.message import Message
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from kafkatest.loopback_http import browser_refusal, send_answer
from kafkatest.schema_registry.rest import RestApi, encode
from kafkatest.schema_registry.state import SchemaRegistry

log = logging.getLogger("kafkatest.schema_registry")

LOOPBACK = "127.0.0.1"
#: Schemas are text; a few MiB holds any real one and bounds what a client can make us read.
MAX_BODY_BYTES = 8 << 20
REQUEST_TIMEOUT_S = 10.0
JSON_TYPES = (
    "application/vnd.schemaregistry.v1+json",
    "application/vnd.schemaregistry+json",
    "application/json",
    "application/octet-stream",
)
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


def refusal(method: str, headers: Message, listen_host: str, port: int) -> tuple[int, str] | None:
    """(status, reason) when a request must be refused before its body is read."""
    refused = browser_refusal(headers, listen_host, port, MAX_BODY_BYTES, "schema registry")
    if refused is not None:
        return refused
    length = int(headers.get("Content-Length") or 0)
    changing = method in ("POST", "PUT") or length > 0 or headers.get("Origin") is not None
    if changing and headers.get_content_type() not in JSON_TYPES:
        return (
            HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
            f"{method} needs Content-Type: {CONTENT_TYPE}, not {headers.get('Content-Type')!r}",
        )
    return None


class SchemaRegistryServer:
    """Serves `registry` on `host`:`port` (0: any free port)."""

    def __init__(
        self, registry: SchemaRegistry | None = None, port: int = 0, host: str = LOOPBACK
    ) -> None:
        self.registry = registry if registry is not None else SchemaRegistry()
        self.api = RestApi(self.registry)
        self.host = host
        self._http = ThreadingHTTPServer((host, port), self._handler_class())
        self._http.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    @property
    def url(self) -> str:
        host = "localhost" if self.host in (LOOPBACK, "localhost") else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> SchemaRegistryServer:
        self._thread = threading.Thread(
            target=self._http.serve_forever, name="kafkatest-schema-registry", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        if self._thread is not None:
            self._http.shutdown()
            self._thread.join(10)
            self._thread = None
        self._http.server_close()

    def serve_forever(self) -> None:
        self._http.serve_forever()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            timeout = REQUEST_TIMEOUT_S
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                refused = refusal(self.command, self.headers, server.host, server.port)
                if refused is not None:
                    status, data = (
                        refused[0],
                        encode({"error_code": refused[0], "message": refused[1]}),
                    )
                    log.warning(
                        "schema registry refused %s %s: %s", self.command, self.path, refused[1]
                    )
                    self.close_connection = True
                else:
                    length = int(self.headers.get("Content-Length") or 0)
                    body = self.rfile.read(length) if length > 0 else b""
                    if len(body) < length:
                        self.close_connection = True
                        return
                    status, answer = server.api.handle(self.command, self.path, body)
                    data = encode(answer)
                send_answer(self, status, data, CONTENT_TYPE)

            do_GET = do_POST = do_DELETE = do_PUT = _serve

            def log_message(self, format: str, *args: Any) -> None:
                log.debug("schema registry %s", format % args)

        return Handler


@contextlib.contextmanager
def start_schema_registry(port: int = 0, host: str = LOOPBACK) -> Iterator[SchemaRegistryServer]:
    """An embedded Confluent-compatible Schema Registry for the block; ``.url`` for clients."""
    server = SchemaRegistryServer(port=port, host=host).start()
    try:
        yield server
    finally:
        server.close()
