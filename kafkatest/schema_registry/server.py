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
from collections.abc import Iterator
from email.message import Message
from http import HTTPStatus
from typing import Any

from kafkatest.loopback_http import LoopbackServer
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


class SchemaRegistryServer(LoopbackServer):
    """Serves `registry` on `host`:`port` (0: any free port)."""

    thread_name = "kafkatest-schema-registry"
    log = log
    label = "schema registry"
    content_type = CONTENT_TYPE
    protocol_version = "HTTP/1.1"
    request_timeout_s = REQUEST_TIMEOUT_S
    max_body_bytes = MAX_BODY_BYTES
    what = "schema registry"

    def __init__(
        self, registry: SchemaRegistry | None = None, port: int = 0, host: str = LOOPBACK
    ) -> None:
        self.registry = registry if registry is not None else SchemaRegistry()
        self.api = RestApi(self.registry)
        super().__init__(host, port)

    @property
    def url(self) -> str:
        host = "localhost" if self.host in (LOOPBACK, "localhost") else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> SchemaRegistryServer:  # type: ignore[override]
        super().start()
        return self

    def serve_forever(self) -> None:
        self._http.serve_forever()

    def content_refusal(self, method: str, headers: Message) -> tuple[int, str] | None:
        """A change, a body or a page's request needs a JSON content type."""
        length = int(headers.get("Content-Length") or 0)
        changing = method in ("POST", "PUT") or length > 0 or headers.get("Origin") is not None
        if changing and headers.get_content_type() not in JSON_TYPES:
            return (
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                f"{method} needs Content-Type: {CONTENT_TYPE}, not {headers.get('Content-Type')!r}",
            )
        return None

    def handle(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        return self.api.handle(method, path, body)

    def refused_answer(self, status: int, reason: str) -> dict[str, Any]:
        return {"error_code": status, "message": reason}

    def encode(self, answer: Any) -> bytes:
        return encode(answer)


@contextlib.contextmanager
def start_schema_registry(port: int = 0, host: str = LOOPBACK) -> Iterator[SchemaRegistryServer]:
    """An embedded Confluent-compatible Schema Registry for the block; ``.url`` for clients."""
    server = SchemaRegistryServer(port=port, host=host).start()
    try:
        yield server
    finally:
        server.close()
