"""The oracle's input: the caller's records placed once, then copied into each run's topic.

Every run must read the same records in the same partitions and order, or a
difference between two runs could come from the input instead of the job. So the
records are seeded once (`seed`, which picks partitions by key and stamps the
producer's timestamps) and each later run's fresh topic gets those placed records
again, with their partitions and timestamps fixed. Copies (redelivery) keep key,
value, headers and timestamp and land at later offsets of the same partition.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kafkatest.brokers.base import Broker
from kafkatest.errors import BrokerError
from kafkatest.records import Record
from kafkatest.seeding import seed
from kafkatest.seeding.result import SeedResult
from kafkatest.sinks.decode import decode, lookup


@dataclass(frozen=True)
class InputRecord:
    """One of the caller's records: its position in their list, identity and placement."""

    index: int
    id: str
    record: Record

    @property
    def partition(self) -> int:
        assert self.record.partition is not None
        return self.record.partition

    def row(self) -> dict[str, Any]:
        """Key and value as a job would parse them (key text, value JSON), with the timestamp."""
        return {
            "key": decode(self.record.key, "str"),
            "value": decode(self.record.value, "json"),
            "timestamp_ms": self.record.timestamp_ms,
        }

    def describe(self) -> str:
        row = self.row()
        key = "" if row["key"] is None else f" key={row['key']!r}"
        value = json.dumps(row["value"], default=str, separators=(",", ":"))
        if len(value) > 120:
            value = value[:117] + "..."
        return f"#{self.index} id={self.id}{key} value={value}"


@dataclass(frozen=True)
class Placement:
    """Where a run's topic holds each input record: ``(partition, offset) -> (index, copy)``."""

    topic: str
    at: Mapping[tuple[int, int], tuple[int, int]]

    def copies(self) -> int:
        return sum(1 for _index, copy in self.at.values() if copy > 0)


def seed_inputs(
    broker: Broker, topic: str, records: Iterable[Any] | str, seed_options: Mapping[str, Any]
) -> tuple[list[InputRecord], Placement]:
    """Seed the first run's topic with the caller's records; they, placed, are the input."""
    options = {"duplicates": "allow", **seed_options}
    seeded: SeedResult = seed(broker, topic, records, **options)  # type: ignore[arg-type]
    inputs = [
        InputRecord(index, rid, record)
        for index, (rid, record) in enumerate(zip(seeded.ids, seeded.records, strict=True))
    ]
    return inputs, _placement(topic, [(i, 0, i.record) for i in inputs])


def copy_inputs(
    broker: Broker, topic: str, inputs: Sequence[InputRecord], copies: int = 1
) -> Placement:
    """Write the placed inputs to `topic`: per partition the records in order, then each
    further copy of them in the same order (a producer retry's later offsets)."""
    batch = [(item, copy) for copy in range(copies) for item in inputs]
    records = [replace(item.record, topic=topic, offset=None) for item, _copy in batch]
    placed = broker.produce(records)
    if len(placed) != len(records):
        raise BrokerError(f"seeding {topic!r}: {len(records)} records sent, {len(placed)} placed")
    return _placement(
        topic, [(item, copy, rec) for (item, copy), rec in zip(batch, placed, strict=True)]
    )


def read_placement(broker: Broker, topic: str, inputs: Sequence[InputRecord]) -> Placement:
    """What a topic written some other way (a producer whose acks were lost) holds: each
    record is matched to its input by partition, key, value and headers; repeats are copies."""
    wanted = {_content(i.record): i for i in inputs}
    seen: dict[int, int] = {}
    out: dict[tuple[int, int], tuple[int, int]] = {}
    for record in broker.consume(topic):
        item = wanted.get(_content(record))
        if item is None or record.offset is None or record.partition is None:
            raise BrokerError(f"{topic!r} holds a record nobody seeded: {record!r}")
        copy = seen.get(item.index, 0)
        seen[item.index] = copy + 1
        out[(record.partition, record.offset)] = (item.index, copy)
    return Placement(topic, out)


def _content(record: Record) -> tuple[Any, ...]:
    return (record.partition, record.key, record.value, record.headers)


def _placement(topic: str, placed: Iterable[tuple[InputRecord, int, Record]]) -> Placement:
    at: dict[tuple[int, int], tuple[int, int]] = {}
    for item, copy, record in placed:
        assert record.partition is not None and record.offset is not None
        at[(record.partition, record.offset)] = (item.index, copy)
    return Placement(topic, at)


def event_time_ms(item: InputRecord, field: str | None) -> int | None:
    """The record's event time in epoch ms: the Kafka timestamp (`field` None or
    ``"timestamp"``), or a field of its JSON value (ISO text, epoch s or ms)."""
    if field is None or field == "timestamp":
        return item.record.timestamp_ms
    value = item.row()["value"]
    if not isinstance(value, Mapping):
        return None
    found, got = lookup(value, field)
    return to_epoch_ms(got) if found else None


def to_epoch_ms(value: Any) -> int | None:
    """A time as epoch ms from a datetime (naive ones are local time, as PySpark gives
    them), ISO-8601 text or a number (seconds below 10^11, else milliseconds)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return int(value * 1000) if abs(value) < 1e11 else int(value)
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if isinstance(value, dt.datetime):
        return int(value.timestamp() * 1000)
    return None
