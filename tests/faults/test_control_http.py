"""The control interface over a real socket: what it refuses, and why.

A web page can make a browser send requests to localhost, so the interface must
refuse anything a page could send without a CORS preflight (form posts, text/plain
bodies, DELETEs without a JSON type), requests for another host name (DNS
rebinding) or from another origin, and bodies whose length is missing, malformed
or too large. Each refusal is a 4xx with a JSON reason, nothing is injected, and
the interface keeps serving. Faults that cannot fire get the same message as the
`Faults` API raises.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import warnings
from typing import Any

import pytest

from kafkatest._ground.exposure import ExposedEmulatorWarning, is_loopback
from kafkatest.apps.control_server import MAX_BODY_BYTES, ControlServer
from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.brokers.process import free_port
from kafkatest.faults import faults_for
from kafkatest.faults.validation import InvalidFault
from kafkatest.loopback_http import host_allowed
from tests.faults.test_control import Standalone, standalone  # noqa: F401

INJECT = b'{"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER"}'


def raw(address: str, head: str, body: bytes = b"") -> tuple[int, Any]:
    """Send `head` (request line and headers, CRLF added) and `body`; (status, JSON)."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as conn:
        conn.sendall(head.replace("\n", "\r\n").encode() + b"\r\n\r\n" + body)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    payload = rest.split(b"\r\n\r\n", 1)[1]
    return int(status_line.split()[1]), json.loads(payload)


def post(address: str, headers: str, body: bytes = INJECT) -> tuple[int, Any]:
    head = f"POST /faults/inject_error HTTP/1.1\n{headers}".rstrip("\n")
    return raw(address, head, body)


def _kept_serving_and_injected_nothing(s: Standalone) -> None:
    assert s.http("GET", "/faults") == (200, {"ok": True, "result": []})


REFUSED = [
    ("form post", "Content-Type: application/x-www-form-urlencoded", 415, "application/json"),
    ("text/plain", "Content-Type: text/plain", 415, "needs Content-Type: application/json"),
    ("no content type", "", 415, "needs Content-Type: application/json, not None"),
    ("latin-1 json", "Content-Type: application/json; charset=latin-1", 415, "application/json"),
    ("malformed length", "Content-Length: abc", 400, "malformed Content-Length 'abc'"),
    ("negative length", "Content-Length: -5", 400, "malformed Content-Length '-5'"),
    (
        "conflicting lengths",
        "Content-Length: 3\nContent-Length: 4",
        400,
        "conflicting Content-Length headers",
    ),
    ("chunked", "Transfer-Encoding: chunked", 400, "not chunked"),
    ("huge length", f"Content-Length: {10**12}", 413, f"over the limit of {MAX_BODY_BYTES}"),
    ("foreign origin", "Origin: http://evil.example", 403, "Origin 'http://evil.example'"),
    ("null origin", "Origin: null", 403, "requests from web pages"),
]


@pytest.mark.parametrize(
    ("headers", "status", "says"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED]
)
def test_requests_a_web_page_could_send_are_refused(
    standalone: Standalone,  # noqa: F811
    headers: str,
    status: int,
    says: str,
) -> None:
    lines = [f"Host: {standalone.control}"]
    if "Content-Type" not in headers and headers:
        lines.append("Content-Type: application/json")
    if "Length" not in headers and "chunked" not in headers:
        lines.append(f"Content-Length: {len(INJECT)}")
    lines += [h for h in headers.split("\n") if h]

    got, answer = post(standalone.control, "\n".join(lines), INJECT)

    assert (got, answer["ok"]) == (status, False), answer
    assert says in answer["error"]
    _kept_serving_and_injected_nothing(standalone)


@pytest.mark.parametrize(
    "host", ["evil.example:{port}", "127.0.0.1.nip.io:{port}", "127.0.0.1:1", "localhost"]
)
def test_a_host_other_than_the_listening_address_is_misdirected(
    standalone: Standalone,  # noqa: F811
    host: str,
) -> None:
    port = standalone.control.rsplit(":", 1)[1]
    headers = f"Host: {host.format(port=port)}\nContent-Type: application/json\n"
    headers += f"Content-Length: {len(INJECT)}"

    got, answer = post(standalone.control, headers)

    assert got == 421
    assert f"is not this control interface (127.0.0.1:{port})" in answer["error"]
    _kept_serving_and_injected_nothing(standalone)


def test_a_missing_host_or_length_is_a_bad_request(standalone: Standalone) -> None:  # noqa: F811
    no_host = post(
        standalone.control, f"Content-Type: application/json\nContent-Length: {len(INJECT)}"
    )
    no_length = post(
        standalone.control, f"Host: {standalone.control}\nContent-Type: application/json", b""
    )

    assert no_host == (400, {"ok": False, "error": "send exactly one Host header"})
    assert no_length[0] == 400 and "POST needs a Content-Length" in no_length[1]["error"]
    _kept_serving_and_injected_nothing(standalone)


def test_delete_needs_json_too(standalone: Standalone) -> None:  # noqa: F811
    status, answer = standalone.http(
        "POST", "/faults/add_latency", b'{"api": "Fetch", "delay_ms": 1}'
    )
    assert status == 200, answer

    refused = raw(standalone.control, f"DELETE /faults HTTP/1.1\nHost: {standalone.control}")
    assert refused[0] == 415
    assert [f["kind"] for f in standalone.http("GET", "/faults")[1]["result"]] == ["latency"]

    port = standalone.control.rsplit(":", 1)[1]
    cleared = raw(
        standalone.control,
        f"DELETE /faults HTTP/1.1\nHost: localhost:{port}\nContent-Type: application/json",
    )
    assert cleared == (200, {"ok": True, "result": None})
    _kept_serving_and_injected_nothing(standalone)


def test_a_stalled_body_does_not_block_other_requests(standalone: Standalone) -> None:  # noqa: F811
    host, port = standalone.control.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as stalled:
        head = (
            f"POST /faults/pause HTTP/1.1\r\nHost: {standalone.control}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        )
        stalled.sendall(head.encode())

        _kept_serving_and_injected_nothing(standalone)


def _http_json(s: Standalone, action: str, params: dict[str, Any]) -> tuple[int, Any]:
    return s.http("POST", f"/faults/{action}", json.dumps(params).encode())


def test_faults_that_cannot_fire_get_the_api_s_message_over_http(
    standalone: Standalone,  # noqa: F811
) -> None:
    topic = standalone.topic(partitions=2)
    in_process = EmulatorBroker()
    with in_process:
        in_process.create_topic(topic, partitions=2)
        api = faults_for(in_process)
        cases: list[tuple[str, dict[str, Any]]] = [
            ("inject_error", {"api": "Produce", "error": 6, "topic": topic, "partition": 2}),
            ("delete_records", {"topic": topic, "before": {"0": 1, "3": 1}}),
            ("add_latency", {"api": "Fetch", "delay_ms": 10**9}),
            ("drop_connections", {"api": "Fetch", "times": 0}),
            ("inject_error", {"api": "Produce", "error": "NOPE"}),
            ("add_partitions", {"topic": topic, "total": 1}),
            ("advance_clock", {"ms": -1}),
            ("lose_produce_acks", {"topic": topic, "partition": 5}),
        ]
        for action, params in cases:
            call = dict(params)
            if action == "delete_records":
                call["before"] = {int(p): o for p, o in params["before"].items()}
            with pytest.raises(InvalidFault) as refused:
                getattr(api, action)(**call)

            status, answer = _http_json(standalone, action, params)

            assert (status, answer) == (400, {"ok": False, "error": str(refused.value)})
    missing = _http_json(standalone, "inject_error", {"api": 0, "error": 6, "topic": topic + "x"})
    assert missing[0] == 400
    assert missing[1]["error"].startswith(f"inject_error: topic '{topic}x' does not exist")
    _kept_serving_and_injected_nothing(standalone)


# -- listening beyond loopback ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "listen", "allowed"),
    [
        ("127.0.0.1:80", "127.0.0.1", True),
        ("localhost:80", "127.0.0.1", True),
        ("LOCALHOST:80", "127.0.0.1", True),
        ("127.0.0.1:81", "127.0.0.1", False),
        ("127.0.0.1", "127.0.0.1", False),
        ("10.1.2.3:80", "127.0.0.1", False),
        ("10.1.2.3:80", "0.0.0.0", True),
        ("[::1]:80", "::", True),
        ("attacker.example:80", "0.0.0.0", False),
        ("localhost:80", "0.0.0.0", True),
        ("10.1.2.3:80", "10.1.2.3", True),
        ("localhost:80", "10.1.2.3", False),
    ],
)
def test_which_host_headers_name_the_server(header: str, listen: str, allowed: bool) -> None:
    assert host_allowed(header, listen, 80) is allowed


def test_loopback_names() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("") and not is_loopback("::")


def test_an_emulator_beyond_loopback_warns_and_one_on_loopback_does_not() -> None:
    with pytest.warns(ExposedEmulatorWarning, match="anyone who can reach it can read and write"):
        EmulatorBroker(host="0.0.0.0").close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        EmulatorBroker(host="127.0.0.1").close()


def test_the_standalone_emulator_warns_when_it_listens_beyond_loopback() -> None:
    port, control = free_port(), free_port()
    command = [
        *("emulator", "--host", "0.0.0.0", "--port", str(port)),
        *("--control-port", str(control), "--control-host", "0.0.0.0"),
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "kafkatest.cli", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        ready = process.stdout.readline()
        assert "bootstrap servers" in ready, ready
        first, second = process.stderr.readline(), process.stderr.readline()
        assert "the emulator listens on every network interface" in first
        assert "its fault control listens on every network interface" in second
        assert "anyone who can reach it can read and write its topics" in first
        # Reached by IP: still served; by a domain name: refused.
        status, _ = raw(f"127.0.0.1:{control}", f"GET /faults HTTP/1.1\nHost: 127.0.0.1:{control}")
        assert status == 200
        status, _ = raw(
            f"127.0.0.1:{control}", f"GET /faults HTTP/1.1\nHost: evil.example:{control}"
        )
        assert status == 421
    finally:
        process.terminate()
        process.wait(20)


def test_a_control_server_on_loopback_is_quiet(capfd: pytest.CaptureFixture[str]) -> None:
    broker = EmulatorBroker()
    with broker:
        server = ControlServer(faults_for(broker))
        server.start()
        try:
            status, answer = raw(server.address, f"GET /faults HTTP/1.1\nHost: {server.address}")
        finally:
            server.close()
    assert (status, answer) == (200, {"ok": True, "result": []})
    assert "WARNING" not in capfd.readouterr().err
