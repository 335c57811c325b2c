"""An in-memory stand-in for a broker's produce path, so seeding logic is tested alone.

Broker-backed seeding tests use the plugin's `kafka_broker` fixture instead.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from pathlib import Path

import pytest

from kafkatest.records import Record

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "data"


class MemoryLog:
    """Places records like Kafka does: explicit partition, else key hash, else round-robin."""

    def __init__(self, partitions: int = 3) -> None:
        self.partitions = partitions
        self.logs: dict[tuple[str, int], list[Record]] = {}
        self._next = 0

    def produce(self, records: Iterable[Record], timeout_s: float = 60.0) -> list[Record]:
        placed = []
        for record in records:
            partition = record.partition
            if partition is None and record.key is not None:
                partition = zlib.crc32(record.key) % self.partitions
            if partition is None:
                partition, self._next = self._next % self.partitions, self._next + 1
            log = self.logs.setdefault((record.topic, partition), [])
            stamped = record.at(partition, len(log), record.timestamp_ms or 1_700_000_000_000)
            log.append(stamped)
            placed.append(stamped)
        return placed


@pytest.fixture
def memory_log() -> MemoryLog:
    return MemoryLog()


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
