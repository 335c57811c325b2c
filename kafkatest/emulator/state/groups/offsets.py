"""Committed consumer offsets, keyed by group, topic and partition.

Kept apart from group membership so that assign-only consumers (generation -1)
and the group coordinator share one store, as Kafka's __consumer_offsets does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class CommittedOffset:
    offset: int
    leader_epoch: int
    metadata: str | None
    commit_timestamp_ms: int


class OffsetJournal(Protocol):
    """Where offset changes are also written as Kafka writes them (`GroupRecords`)."""

    def offset_committed(
        self, group: str, topic: str, partition: int, committed: CommittedOffset
    ) -> None: ...

    def offset_removed(self, group: str, topic: str, partition: int) -> None: ...

    #: `record` is a `group_records.GroupMetadataRecord` (a module above this one).
    def group_changed(self, group: str, record: Any) -> None: ...

    def group_removed(self, group: str) -> None: ...


class OffsetStore:
    def __init__(self) -> None:
        self._offsets: dict[str, dict[tuple[str, int], CommittedOffset]] = {}
        #: Where each change is also written as Kafka writes it (`state.group_records`).
        self.records: OffsetJournal | None = None

    def commit(self, group: str, topic: str, partition: int, committed: CommittedOffset) -> None:
        self._offsets.setdefault(group, {})[(topic, partition)] = committed
        if self.records is not None:
            self.records.offset_committed(group, topic, partition, committed)

    def fetch(self, group: str, topic: str, partition: int) -> CommittedOffset | None:
        return self._offsets.get(group, {}).get((topic, partition))

    def of_group(self, group: str) -> dict[tuple[str, int], CommittedOffset]:
        return dict(self._offsets.get(group, {}))

    def groups(self) -> list[str]:
        return sorted(group for group, offsets in self._offsets.items() if offsets)

    def delete_group(self, group: str) -> bool:
        removed = self._offsets.pop(group, None)
        for topic, partition in removed or ():
            self._removed(group, topic, partition)
        return removed is not None

    def delete(self, group: str, topic: str, partition: int) -> None:
        if self._offsets.get(group, {}).pop((topic, partition), None) is not None:
            self._removed(group, topic, partition)

    def forget_topic(self, topic: str) -> None:
        for group, offsets in self._offsets.items():
            for key in [k for k in offsets if k[0] == topic]:
                del offsets[key]
                self._removed(group, *key)

    def _removed(self, group: str, topic: str, partition: int) -> None:
        if self.records is not None:
            self.records.offset_removed(group, topic, partition)
