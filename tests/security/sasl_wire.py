"""Speak the SASL exchange byte by byte, to see exactly what a broker answers."""

from __future__ import annotations

import io
import socket
import ssl
import struct
from typing import Any

from kio.index import load_payload_module
from kio.serial import entity_reader, entity_writer
from kio.static.constants import EntityType

from kafkatest import Broker
from kafkatest.brokers.token_client import request_entity
from kafkatest.emulator.protocol import frame
from kafkatest.emulator.protocol.messages import request_schema


def connect(broker: Broker) -> socket.socket:
    host, port = broker.bootstrap_servers.split(",")[0].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=10)
    runtime = broker.security_runtime
    if runtime is not None and runtime.ca is not None:
        context = ssl.create_default_context(cafile=str(runtime.ca.ca_pem))
        sock = context.wrap_socket(sock, server_hostname=host)
    return sock


def send(
    sock: socket.socket, api_key: int, version: int, request: Any, correlation_id: int = 1
) -> None:
    schema = request_schema(api_key, version)
    assert schema is not None
    header = struct.pack(">hhih", api_key, version, correlation_id, 4) + b"test"
    if schema.__flexible__:
        header += b"\0"
    body = io.BytesIO()
    entity_writer(type(request))(body, request)
    sock.sendall(frame(header + body.getvalue()))


def read_frame(sock: socket.socket) -> bytes | None:
    """One frame's payload, or None once the broker has closed the connection."""
    size = _exactly(sock, 4)
    if size is None:
        return None
    return _exactly(sock, struct.unpack(">i", size)[0])


def receive(sock: socket.socket, api_key: int, version: int) -> Any | None:
    """The decoded response, or None if the broker closed the connection instead."""
    payload = read_frame(sock)
    if payload is None:
        return None
    module = load_payload_module(api_key, version, EntityType.response)
    response_cls = next(
        v
        for v in vars(module).values()
        if isinstance(v, type) and getattr(v, "__type__", None) is EntityType.response
    )
    flexible_header = response_cls.__flexible__ and api_key != 18
    offset = 5 if flexible_header else 4
    response, _ = entity_reader(response_cls)(payload, offset)
    return response


def closed(sock: socket.socket) -> bool:
    """True once the broker has closed the connection (nothing more to read)."""
    return read_frame(sock) is None


def _exactly(sock: socket.socket, count: int) -> bytes | None:
    data = b""
    while len(data) < count:
        try:
            chunk = sock.recv(count - len(data))
        except (ConnectionResetError, ssl.SSLError):
            return None
        if not chunk:
            return None
        data += chunk
    return data


def request(api: str, version: int, **fields: Any) -> Any:
    """A kio request entity, e.g. request("sasl_handshake", 1, mechanism="PLAIN")."""
    return request_entity(api, version, **fields)
