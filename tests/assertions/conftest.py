"""Seed results and sink rows built in memory: the assertions need no broker."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest

from kafkatest.records import Record
from kafkatest.seeding.items import prepare
from kafkatest.seeding.result import SeedResult
from kafkatest.sinks.decode import record_row

SeedMaker = Callable[..., SeedResult]
RowMaker = Callable[..., list[dict[str, Any]]]


@pytest.fixture
def make_seed() -> SeedMaker:
    """`count` JSON records keyed by user, spread round-robin over `partitions`."""

    def make(
        count: int = 100, partitions: int = 2, topic: str = "orders", id_field: str | None = None
    ) -> SeedResult:
        values = [{"user": f"u{i % 3}", "n": i} for i in range(count)]
        records, ids = prepare(
            values,
            topic,
            key_field="user",
            id_header="kafkatest.id",
            id_field=id_field,
            id_prefix="",
        )
        placed = [rec.at(i % partitions, i // partitions) for i, rec in enumerate(records)]
        return SeedResult(topic, tuple(placed), tuple(ids), "kafkatest.id", id_field)

    return make


@pytest.fixture
def sink_rows() -> RowMaker:
    """Rows as a job copying the seed to topic ``out`` would leave them (same placement)."""

    def make(
        records: Iterable[Record],
        drop: Iterable[str] = (),
        repeat: Iterable[str] = (),
    ) -> list[dict[str, Any]]:
        dropped, repeated = set(drop), list(repeat)
        rows = []
        for record in records:
            row = {**record_row(record), "topic": "out"}
            if row["headers"]["kafkatest.id"] not in dropped:
                rows.append(row)
        by_id = {row["headers"]["kafkatest.id"]: row for row in rows}
        for offset, rid in enumerate(repeated, start=10_000):
            rows.append({**by_id[rid], "offset": offset})
        return rows

    return make
