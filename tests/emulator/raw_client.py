"""A bare-socket Kafka client for tests that must send exact (or broken) bytes."""

from __future__ import annotations

import io
import socket
import struct
from typing import Any

from kio.serial import entity_writer

from kafkatest.emulator.protocol.framing import frame
from kafkatest.emulator.protocol.messages import request_schema


def connect(bootstrap: str) -> socket.socket:
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=5)
    return sock


def request_frame(api_key: int, version: int, correlation_id: int, body: bytes) -> bytes:
    """Header v1 or v2 (as the API version needs) followed by `body`."""
    schema = request_schema(api_key, version)
    flexible = schema is not None and schema.__flexible__
    header = struct.pack(">hhih", api_key, version, correlation_id, 4) + b"test"
    if flexible:
        header += b"\0"
    return frame(header + body)


def encode(entity: Any) -> bytes:
    buffer = io.BytesIO()
    entity_writer(type(entity))(buffer, entity)
    return buffer.getvalue()


def read_frame(sock: socket.socket) -> bytes | None:
    """One response frame, or None if the broker closed the connection."""
    size_bytes = _read_exactly(sock, 4)
    if size_bytes is None:
        return None
    (size,) = struct.unpack(">i", size_bytes)
    return _read_exactly(sock, size)


def _read_exactly(sock: socket.socket, count: int) -> bytes | None:
    data = b""
    while len(data) < count:
        try:
            chunk = sock.recv(count - len(data))
        except ConnectionResetError:
            return None
        if not chunk:
            return None
        data += chunk
    return data


def ask(bootstrap: str, api_key: int, version: int, request: Any, correlation_id: int = 11) -> Any:
    """Send one request on a fresh connection and decode the answer with kio."""
    from kio.serial import entity_reader

    from kafkatest.emulator.protocol.messages import response_schema

    with connect(bootstrap) as sock:
        sock.sendall(request_frame(api_key, version, correlation_id, encode(request)))
        reply = read_frame(sock)
    assert reply is not None, f"API {api_key} v{version}: the broker closed the connection"
    assert struct.unpack(">i", reply[:4])[0] == correlation_id
    schema = response_schema(api_key, version)
    assert schema is not None
    # ApiVersions always answers with header v0; flexible responses add a tag byte.
    offset = 5 if schema.__flexible__ and api_key != 18 else 4
    return entity_reader(schema)(reply, offset)[0]


def fetch_v12_request(
    topic: str, *, offset: int = 0, max_wait_ms: int = 0, min_bytes: int = 0, isolation: int = 0
) -> Any:
    """A Fetch v12 of partition 0 of `topic` from `offset` (no fetch session)."""
    import datetime

    from kio.schema.fetch.v12.request import FetchPartition, FetchRequest, FetchTopic
    from kio.static.primitive import i8, i32, i64

    partition = FetchPartition(
        partition=i32(0),
        current_leader_epoch=i32(-1),
        fetch_offset=i64(offset),
        last_fetched_epoch=i32(-1),
        log_start_offset=i64(-1),
        partition_max_bytes=i32(1 << 20),
    )
    return FetchRequest(
        replica_id=i32(-1),
        max_wait=datetime.timedelta(milliseconds=max_wait_ms),
        min_bytes=i32(min_bytes),
        max_bytes=i32(1 << 20),
        isolation_level=i8(isolation),
        session_id=i32(0),
        session_epoch=i32(-1),
        topics=(FetchTopic(topic=topic, partitions=(partition,)),),
        forgotten_topics_data=(),
        rack_id="",
    )
