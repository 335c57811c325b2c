"""The record as kafkatest passes it between seeding, brokers and sink readers.

One small value type keeps every layer speaking the same language: what a test
seeds is what a broker helper produces, and what a reader returns can be matched
back to it by topic, partition and offset.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

Header = tuple[str, bytes | None]


def to_bytes(value: Any) -> bytes | None:
    """Encode what a user naturally writes (str, dict, bytes) as Kafka bytes.

    Dicts and lists become compact JSON, because that is what the jobs under
    test parse; strings are UTF-8.
    """
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (dict, list, int, float, bool)):
        # NaN and infinities are not JSON: refuse them rather than write what no reader parses.
        return json.dumps(value, separators=(",", ":"), allow_nan=False).encode("utf-8")
    raise TypeError(
        f"cannot turn a {type(value).__name__} into Kafka bytes: pass bytes, str, "
        "or a JSON-serialisable dict/list"
    )


def to_headers(headers: Mapping[str, Any] | Sequence[tuple[str, Any]] | None) -> tuple[Header, ...]:
    """Normalise headers to Kafka's shape: an ordered list, keys may repeat."""
    if not headers:
        return ()
    items = headers.items() if isinstance(headers, Mapping) else headers
    out: list[Header] = []
    for key, value in items:
        if not isinstance(key, str):
            raise TypeError(f"header keys must be str, got {key!r}")
        out.append((key, to_bytes(value)))
    return tuple(out)


def last_header(headers: Sequence[Header], name: str | None) -> bytes | None:
    """The last value of header `name` (Kafka allows repeats; last wins, as in Spark)."""
    return next((value for key, value in reversed(headers) if key == name), None)


@dataclass(frozen=True)
class Record:
    """A Kafka record: what is written, and (with offset set) what was read back."""

    topic: str
    value: bytes | None
    key: bytes | None = None
    headers: tuple[Header, ...] = field(default_factory=tuple)
    partition: int | None = None
    timestamp_ms: int | None = None
    offset: int | None = None

    @classmethod
    def make(
        cls,
        topic: str,
        value: Any,
        key: Any = None,
        headers: Mapping[str, Any] | Sequence[tuple[str, Any]] | None = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
    ) -> Record:
        """Build a record from friendly Python values (str, dict, bytes)."""
        return cls(
            topic=topic,
            value=to_bytes(value),
            key=to_bytes(key),
            headers=to_headers(headers),
            partition=partition,
            timestamp_ms=timestamp_ms,
        )

    def at(self, partition: int, offset: int, timestamp_ms: int | None = None) -> Record:
        """The same record, placed where the broker put it."""
        return replace(
            self,
            partition=partition,
            offset=offset,
            timestamp_ms=self.timestamp_ms if timestamp_ms is None else timestamp_ms,
        )

    def header(self, name: str) -> bytes | None:
        """The last value of header `name` (Kafka allows repeats; last wins, as in Spark)."""
        return last_header(self.headers, name)

    def value_text(self) -> str | None:
        return None if self.value is None else self.value.decode("utf-8")

    def key_text(self) -> str | None:
        return None if self.key is None else self.key.decode("utf-8")

    def value_json(self) -> Any:
        return None if self.value is None else json.loads(self.value)


def offsets_by_partition(records: Iterable[Record]) -> dict[int, list[int]]:
    """Group the offsets of placed records by partition, sorted."""
    out: dict[int, list[int]] = {}
    for record in records:
        if record.partition is None or record.offset is None:
            continue
        out.setdefault(record.partition, []).append(record.offset)
    for offsets in out.values():
        offsets.sort()
    return out
