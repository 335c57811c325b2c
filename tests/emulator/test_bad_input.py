"""Broken clients get Kafka's answer or lose their own connection, never others'."""

from __future__ import annotations

import logging
import struct
import time

import pytest
from kio.schema.api_versions.v0.response import ApiVersionsResponse as ApiVersionsV0
from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.api_versions.v3.response import ApiVersionsResponse as ApiVersionsV3
from kio.schema.errors import ErrorCode
from kio.serial import entity_reader
from raw_client import connect, encode, read_frame, request_frame

from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.emulator.protocol.framing import DEFAULT_MAX_FRAME_BYTES, frame

API_VERSIONS_V3 = encode(
    ApiVersionsRequest(client_software_name="raw", client_software_version="1")
)


def _still_serves(emulator: EmulatorBroker) -> None:
    """A fresh connection still gets a proper ApiVersions answer."""
    with connect(emulator.bootstrap_servers) as sock:
        sock.sendall(request_frame(18, 3, 99, API_VERSIONS_V3))
        reply = read_frame(sock)
    assert reply is not None
    assert struct.unpack(">i", reply[:4])[0] == 99
    response, _ = entity_reader(ApiVersionsV3)(reply, 4)
    assert response.error_code is ErrorCode.none
    advertised = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert advertised[18] == (0, 4)
    assert advertised[1] == (4, 18)


def test_api_versions_at_a_future_version_answers_v0_with_unsupported_version(
    emulator: EmulatorBroker,
) -> None:
    with connect(emulator.bootstrap_servers) as sock:
        # v99 has an unknown body layout: only the header can be read.
        raw = struct.pack(">hhih", 18, 99, 7, 4) + b"test" + b"\0garbage"
        sock.sendall(frame(raw))
        reply = read_frame(sock)
    assert reply is not None
    assert struct.unpack(">i", reply[:4])[0] == 7
    response, _ = entity_reader(ApiVersionsV0)(reply, 4)
    assert response.error_code is ErrorCode.unsupported_version
    assert any(k.api_key == 0 for k in response.api_keys)


@pytest.mark.parametrize(
    ("name", "payload"),
    [
        ("unknown api key", request_frame(9999, 0, 1, b"")),
        ("unsupported version", request_frame(1, 1, 1, b"")),
        ("header too short", frame(b"\x00\x03")),
        ("malformed body", request_frame(3, 12, 1, b"\xff\xff\xff")),
        ("frame over the size limit", struct.pack(">i", DEFAULT_MAX_FRAME_BYTES + 1)),
        ("negative frame size", struct.pack(">i", -1)),
    ],
)
def test_bad_requests_close_only_their_connection(
    emulator: EmulatorBroker, name: str, payload: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.INFO, logger="kafkatest.emulator"),
        connect(emulator.bootstrap_servers) as bystander,
    ):
        with connect(emulator.bootstrap_servers) as sock:
            sock.sendall(payload)
            assert read_frame(sock) is None, f"{name}: the connection should be closed"
        bystander.sendall(request_frame(18, 3, 5, API_VERSIONS_V3))
        assert read_frame(bystander) is not None
    assert any("closing connection" in r.getMessage() for r in caplog.records)
    _still_serves(emulator)


def test_client_disconnecting_mid_request_is_logged(
    emulator: EmulatorBroker, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="kafkatest.emulator"):
        with connect(emulator.bootstrap_servers) as sock:
            sock.sendall(request_frame(18, 3, 1, API_VERSIONS_V3)[:9])
        _still_serves(emulator)
        # The emulator's thread notices the closed socket on its own schedule.
        deadline = time.monotonic() + 10
        while not _logged(caplog, "mid-request") and time.monotonic() < deadline:
            time.sleep(0.02)
    assert _logged(caplog, "mid-request")


def _logged(caplog: pytest.LogCaptureFixture, text: str) -> bool:
    return any(text in r.getMessage() for r in caplog.records)


def test_pipelined_requests_are_answered_in_order(emulator: EmulatorBroker) -> None:
    with connect(emulator.bootstrap_servers) as sock:
        sock.sendall(b"".join(request_frame(18, 3, i, API_VERSIONS_V3) for i in range(20)))
        ids = []
        for _ in range(20):
            reply = read_frame(sock)
            assert reply is not None
            ids.append(struct.unpack(">i", reply[:4])[0])
    assert ids == list(range(20))
