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
