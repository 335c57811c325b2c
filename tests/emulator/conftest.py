"""Fixtures for the emulator's own tests: one emulator for the whole session.

Each test gets fresh topic names, so tests share the broker without sharing data.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest

from kafkatest.brokers.emulator import EmulatorBroker

_names = itertools.count()


@pytest.fixture(scope="session")
def emulator() -> Iterator[EmulatorBroker]:
    broker = EmulatorBroker()
    broker.start()
    yield broker
    broker.close()


@pytest.fixture
def new_topic(request: pytest.FixtureRequest) -> Callable[[], str]:
    """Makes topic names unique to this test (not created: tests create them)."""
    base = request.node.name.replace("[", "-").replace("]", "").replace("_", "-")[:80]

    def make() -> str:
        return f"{base}-{next(_names)}"

    return make


@pytest.fixture
def topic(emulator: EmulatorBroker, new_topic: Callable[[], str]) -> str:
    """A fresh single-partition topic."""
    name = new_topic()
    emulator.create_topic(name, partitions=1)
    return name


@pytest.fixture
def unused_port() -> int:
    """A port with a free neighbour (for two brokers), as the OS hands them out."""
    import socket

    for _ in range(20):
        with socket.socket() as first:
            first.bind(("127.0.0.1", 0))
            port = first.getsockname()[1]
            with socket.socket() as second:
                try:
                    second.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
        return int(port)
    raise RuntimeError("no pair of free ports")
