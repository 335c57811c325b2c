"""EmulatorBroker start/stop/restart, several brokers, and the standalone entry."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.records import Record


def test_answers_as_soon_as_start_returns() -> None:
    """start() returns only once clients are served (its speed is measured by `kafkatest bench`)."""
    broker = EmulatorBroker()
    broker.start()
    try:
        assert broker.list_topics() == []
    finally:
        broker.close()


def test_stop_and_start_keep_data_and_ports() -> None:
    with EmulatorBroker() as broker:
        broker.create_topic("kept", partitions=2)
        broker.produce([Record.make("kept", f"v{i}", partition=i % 2) for i in range(10)])
        address = broker.bootstrap_servers
        broker.stop()
        host, port = address.rsplit(":", 1)
        with socket.socket() as probe:
            assert probe.connect_ex((host, int(port))) != 0, "stopped broker must not listen"
        broker.start()
        assert broker.bootstrap_servers == address
        assert len(broker.consume("kept")) == 10
        broker.restart()
        broker.produce([Record.make("kept", "after", partition=0)])
        assert broker.latest_offsets("kept") == {0: 6, 1: 5}


def test_several_brokers_spread_leaders_and_serve_clients() -> None:
    with EmulatorBroker(brokers=3) as broker:
        assert len(broker.bootstrap_servers.split(",")) == 3
        broker.create_topic("spread", partitions=6)
        metadata = broker.admin().list_topics("spread", timeout=10)
        assert sorted(metadata.brokers) == [1, 2, 3]
        leaders = {p.leader for p in metadata.topics["spread"].partitions.values()}
        assert leaders == {1, 2, 3}
        broker.produce([Record.make("spread", f"v{i}", key=f"k{i}") for i in range(60)])
        assert len(broker.consume("spread")) == 60


def test_standalone_serves_until_sigterm(unused_port: int) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "kafkatest.emulator", "--port", str(unused_port), "--brokers", "2"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert f"127.0.0.1:{unused_port},127.0.0.1:{unused_port + 1}" in line
        with socket.create_connection(("127.0.0.1", unused_port + 1), timeout=5):
            pass
        process.send_signal(signal.SIGTERM)
        assert process.wait(10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
