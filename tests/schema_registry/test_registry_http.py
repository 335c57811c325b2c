"""The registry's HTTP layer: a web page cannot drive it, and the standalone command serves it."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

pytest.importorskip("fastavro", reason="pip install 'kafkatest[schemas]'")

from kafkatest.schema_registry import SchemaRegistryServer, start_schema_registry

SR_JSON = "application/vnd.schemaregistry.v1+json"
BODY = json.dumps({"schema": json.dumps("string")})


@pytest.fixture
def registry() -> Iterator[SchemaRegistryServer]:
    with start_schema_registry() as server:
        yield server


def request(
    server: SchemaRegistryServer, method: str, path: str, body: str | None = None, **headers: str
) -> tuple[int, object]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        sent = {
            "Host": f"127.0.0.1:{server.port}",
            **{k.replace("_", "-"): v for k, v in headers.items()},
        }
        connection.request(method, path, body=body, headers=sent)
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        connection.close()


def test_web_pages_are_refused(registry: SchemaRegistryServer) -> None:
    path = "/subjects/s/versions"
    status, _ = request(
        registry, "POST", path, BODY, Content_Type=SR_JSON, Origin="http://evil.example"
    )
    assert status == 403
    # A form post (text/plain needs no CORS preflight) is refused for its content type.
    status, _ = request(registry, "POST", path, BODY, Content_Type="text/plain")
    assert status == 415
    # DNS rebinding: the page's own name in Host.
    status, _ = request(registry, "GET", "/subjects", Host="evil.example:80")
    assert status == 421
    assert request(registry, "GET", "/subjects") == (200, [])
    assert request(registry, "POST", path, BODY, Content_Type=SR_JSON) == (200, {"id": 1})


def test_unknown_paths_and_bodies(registry: SchemaRegistryServer) -> None:
    assert request(registry, "GET", "/nowhere") == (
        404,
        {"error_code": 404, "message": "HTTP 404 Not Found"},
    )
    status, answer = request(registry, "POST", "/subjects/s/versions", "[1]", Content_Type=SR_JSON)
    assert status == 422 and isinstance(answer, dict) and answer["error_code"] == 422
    status, answer = request(registry, "POST", "/subjects/s/versions", "{", Content_Type=SR_JSON)
    assert status == 400


def test_raw_schema_endpoints(registry: SchemaRegistryServer) -> None:
    request(registry, "POST", "/subjects/s/versions", BODY, Content_Type=SR_JSON)
    assert request(registry, "GET", "/subjects/s/versions/latest/schema") == (200, "string")
    assert request(registry, "GET", "/schemas/ids/1/schema") == (200, "string")
    assert request(registry, "GET", "/schemas/ids/1/versions") == (
        200,
        [{"subject": "s", "version": 1}],
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_standalone_command() -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "kafkatest.cli", "schema-registry", "--port", str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == f"schema registry on http://localhost:{port}"
        from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

        client = SchemaRegistryClient({"url": f"http://localhost:{port}"})
        assert client.register_schema("s-value", Schema(json.dumps("long"), "AVRO")) == 1
        assert client.get_subjects() == ["s-value"]
    finally:
        process.terminate()
        process.wait(30)


def test_hostile_bodies_cost_one_answer(registry: SchemaRegistryServer) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    status, answer = request(registry, "POST", "/subjects/s/versions", deep, Content_Type=SR_JSON)
    assert status == 400 and isinstance(answer, dict) and answer["error_code"] == 400
    nested = '{"type":"array","items":' * 5000 + '"int"' + "}" * 5000
    status, answer = request(
        registry,
        "POST",
        "/subjects/s/versions",
        json.dumps({"schema": nested}),
        Content_Type=SR_JSON,
    )
    assert status == 422 and isinstance(answer, dict) and answer["error_code"] == 42201
    assert len(answer["message"]) < 2000  # the refused schema is quoted, not echoed whole
    # A body over the limit is refused from its headers, before a byte of it is read.
    connection = http.client.HTTPConnection("127.0.0.1", registry.port, timeout=30)
    try:
        connection.putrequest("POST", "/subjects/s/versions", skip_host=True)
        connection.putheader("Host", f"127.0.0.1:{registry.port}")
        connection.putheader("Content-Type", SR_JSON)
        connection.putheader("Content-Length", str(9 << 20))
        connection.endheaders()
        assert connection.getresponse().status == 413
    finally:
        connection.close()
    assert request(registry, "GET", "/subjects") == (200, [])
