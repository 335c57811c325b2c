"""The ports kafkatest's brokers listen on lie outside the OS's ephemeral range, so no
client's own end of a connection can take a stopped broker's port before it restarts."""

from __future__ import annotations

import socket

import pytest

from kafkatest.brokers import process


def test_a_free_port_is_below_the_ephemeral_range() -> None:
    start = process._ephemeral_start()
    ports = {process.free_port() for _ in range(20)}
    assert all(process._LISTEN_FROM <= port < start for port in ports), (start, ports)
    for port in ports:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))  # and free to listen on


def test_without_room_below_the_range_the_os_picks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "_ephemeral_start", lambda: process._LISTEN_FROM + 10)
    assert process.free_port() > 0
