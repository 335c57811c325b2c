"""What a seed call wrote, so a test can trace each record to the sink and back."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from kafkatest.records import Record, offsets_by_partition


class Origin(NamedTuple):
    """Where a record sits in Kafka; failure reports point here."""

    topic: str
    partition: int
    offset: int

    def __str__(self) -> str:
        return f"{self.topic}[{self.partition}]@{self.offset}"


class LogRanges(Protocol):
    """What a report asks the broker when records are missing: where each log is now."""

    def earliest_offsets(self, topic: str) -> dict[int, int]: ...

    def latest_offsets(self, topic: str) -> dict[int, int]: ...


@dataclass(frozen=True)
class SeedResult:
    """The records a seed placed, their identities and where each one landed.

    Assertions take it as the expected side: it knows every record's identity
    (how to find it in the sink) and origin (what to print when it is missing).
    """

    topic: str
    records: tuple[Record, ...]
    ids: tuple[str, ...]
    id_header: str | None
    id_field: str | None
    #: The broker the records went to: a failed assertion asks it where each partition's
    #: log starts now, to tell records the broker deleted from records the job lost.
    broker: LogRanges | None = field(default=None, repr=False, compare=False)
    #: "allow" when identities may repeat: the assertions then expect each one once.
    duplicates: str = "forbid"
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.records) != len(self.ids):
            raise ValueError(f"{len(self.records)} records but {len(self.ids)} ids")
        index: dict[str, int] = {}
        for i, rid in enumerate(self.ids):
            index.setdefault(rid, i)  # a repeated identity (duplicates="allow"): its first copy
        object.__setattr__(self, "_index", index)

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records)

    @property
    def offsets_by_partition(self) -> dict[int, list[int]]:
        """Seeded offsets per partition, sorted: the ranges a job should read."""
        return offsets_by_partition(self.records)

    def record(self, record_id: str) -> Record:
        """The placed record with this identity."""
        try:
            return self.records[self._index[record_id]]
        except KeyError:
            raise KeyError(
                f"no record with id {record_id!r} was seeded to {self.topic!r}"
            ) from None

    def where(self, record_id: str) -> Origin:
        """Topic, partition and offset of the record with this identity."""
        placed = self.record(record_id)
        assert placed.partition is not None and placed.offset is not None
        return Origin(placed.topic, placed.partition, placed.offset)

    def ids_in(self, partition: int, offsets: Sequence[int] | range) -> list[str]:
        """Identities seeded at these offsets of a partition (e.g. a range to lose on purpose)."""
        wanted = set(offsets)
        return [
            rid
            for rid, rec in zip(self.ids, self.records, strict=True)
            if rec.partition == partition and rec.offset in wanted
        ]
