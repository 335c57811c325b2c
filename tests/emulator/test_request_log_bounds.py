"""The request log is bounded in bytes, not only entries (issue 44: 60 Metadata requests
of 1 MB took 346 MiB). Each entry keeps its request within MAX_REQUEST_LOG_ENTRY_BYTES
(a list past it ends with "... N more", a long string is cut, its length said) and the
log drops its oldest entries once past MAX_REQUEST_LOG_BYTES. Sizes here are the log's
own estimates, which decide what it keeps: no memory reading, no time."""

from __future__ import annotations

import socket
from types import SimpleNamespace
from typing import Any

from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from raw_client import encode, read_frame, request_frame

from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.emulator.server.request_log import RequestLog
from kafkatest.emulator.state import EmulatorState
from kafkatest.limits import MAX_REQUEST_LOG_ENTRY_BYTES, MAX_REQUEST_LOG_STRING

#: About 330 KB of Metadata request: its log entry (some 600 KB written out) is past
#: MAX_REQUEST_LOG_ENTRY_BYTES, so each test here meets the bound.
NAMINGS = 15_000


def _metadata(names: list[str]) -> MetadataRequest:
    return MetadataRequest(
        topics=tuple(MetadataRequestTopic(topic_id=None, name=n) for n in names),  # type: ignore[arg-type]
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )


def _ctx(connection: int = 1) -> Any:
    return SimpleNamespace(
        api_key=3,
        api_version=12,
        client_id="big",
        state=EmulatorState(),
        connection_id=connection,
        peer="127.0.0.1:1",
        broker_id=1,
    )


def test_a_large_request_is_kept_in_part_and_says_how_much_more() -> None:
    log = RequestLog()
    log.record(_ctx(), _metadata([f"t-{n}" for n in range(NAMINGS)]), None)
    [entry] = log.entries()
    topics = entry.request["topics"]
    assert topics[-1].startswith("... ") and topics[-1].endswith(" more")
    kept = len(topics) - 1
    assert 0 < kept < NAMINGS and topics[-1] == f"... {NAMINGS - kept} more"
    assert topics[0] == {"topic_id": None, "name": "t-0"}
    assert log.bytes <= MAX_REQUEST_LOG_ENTRY_BYTES + 4096


def test_a_long_string_is_cut_and_an_ordinary_request_kept_whole() -> None:
    log = RequestLog()
    log.record(_ctx(), _metadata(["x" * 30_000, "small"]), None)
    [entry] = log.entries()
    first, second = entry.request["topics"]
    assert first["name"] == "x" * MAX_REQUEST_LOG_STRING + "... (30000 characters)"
    assert second == {"topic_id": None, "name": "small"}


def test_the_log_drops_its_oldest_entries_past_its_bytes() -> None:
    log = RequestLog(limit=10_000, max_bytes=4 * MAX_REQUEST_LOG_ENTRY_BYTES)
    big = _metadata([f"t-{n}" for n in range(NAMINGS)])
    for _ in range(60):
        log.record(_ctx(), big, None)
    assert log.recorded == 60
    assert log.bytes <= 4 * MAX_REQUEST_LOG_ENTRY_BYTES
    kept, dropped = log.since(0)
    assert 1 <= len(kept) <= 4 and dropped == 60 - len(kept)


def test_large_requests_over_the_wire_are_logged_within_the_bound() -> None:
    broker = EmulatorBroker()
    broker.start()
    try:
        broker.record_requests()
        frame = request_frame(3, 12, 1, encode(_metadata([f"t-{n}" for n in range(NAMINGS)])))
        host, port = broker.bootstrap_servers.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=60) as sock:
            for _ in range(3):
                sock.sendall(frame)
                assert read_frame(sock) is not None
        log = broker.request_log
        assert log is not None
        assert len(broker.requests("Metadata")) == 3
        assert log.bytes <= 3 * (MAX_REQUEST_LOG_ENTRY_BYTES + 4096)
    finally:
        broker.close()
