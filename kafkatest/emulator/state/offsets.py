"""Committed consumer offsets, keyed by group, topic and partition.

Kept apart from group membership so that assign-only consumers (generation -1)
and the group coordinator share one store, as Kafka's __consumer_offsets does.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CommittedOffset:
    offset: int
    leader_epoch: int
    metadata: str | None
    commit_timestamp_ms: int


class OffsetStore:
    def __init__(self) -> None:
        self._offsets: dict[str, dict[tuple[str, int], CommittedOffset]] = {}

    def commit(self, group: str, topic: str, partition: int, committed: CommittedOffset) -> None:
        self._offsets.setdefault(group, {})[(topic, partition)] = committed

    def fetch(self, group: str, topic: str, partition: int) -> CommittedOffset | None:
        return self._offsets.get(group, {}).get((topic, partition))

    def of_group(self, group: str) -> dict[tuple[str, int], CommittedOffset]:
        return dict(self._offsets.get(group, {}))

    def groups(self) -> list[str]:
        return sorted(group for group, offsets in self._offsets.items() if offsets)

    def delete_group(self, group: str) -> bool:
        return self._offsets.pop(group, None) is not None

    def delete(self, group: str, topic: str, partition: int) -> None:
        self._offsets.get(group, {}).pop((topic, partition), None)

    def forget_topic(self, topic: str) -> None:
        for offsets in self._offsets.values():
            for key in [k for k in offsets if k[0] == topic]:
                del offsets[key]
