"""A classic group's committed offsets: who may commit, and what may be fetched or deleted.

The offsets themselves live in the broker's `OffsetStore`; what is particular to
classic groups is the membership checks Kafka makes before a commit (generation,
fencing, rebalance in progress) and its rules for OffsetDelete, which depend on
what the members subscribe to. Kept apart from joining and syncing (groups.py),
which never look at offsets.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from kio.schema.errors import ErrorCode

from kafkatest.emulator.state.groups.classic.model import GroupState
from kafkatest.emulator.state.groups.classic.rebalance import COMPLETING, EMPTY, Rebalancer
from kafkatest.emulator.state.groups.clock import Clock
from kafkatest.emulator.state.groups.offsets import CommittedOffset
from kafkatest.emulator.state.groups.registry import GroupRegistry

TopicPartition = tuple[str, int]


@dataclasses.dataclass(eq=False)
class GroupOffsets:
    """OffsetCommit, OffsetFetch and OffsetDelete for the registry's groups."""

    _clock: Clock
    _registry: GroupRegistry
    _rebalancer: Rebalancer
    _max_offset_metadata_bytes: int

    def store(
        self, group_id: str, offsets: Mapping[TopicPartition, CommittedOffset]
    ) -> dict[TopicPartition, ErrorCode]:
        """Store the offsets of an allowed committer (see `commit_error`): each one is
        refused alone if its metadata is too large, and stamped if it has no time."""
        now = self._clock.now_ms()
        results: dict[TopicPartition, ErrorCode] = {}
        for partition, committed in offsets.items():
            metadata_size = len((committed.metadata or "").encode())
            if metadata_size > self._max_offset_metadata_bytes:
                results[partition] = ErrorCode.offset_metadata_too_large
                continue
            if committed.commit_timestamp_ms < 0:
                committed = dataclasses.replace(committed, commit_timestamp_ms=now)
            self._registry.offsets.commit(group_id, *partition, committed)
            results[partition] = ErrorCode.none
        return results

    def commit_error(
        self, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None
    ) -> ErrorCode | None:
        """Why this member may not commit for the group, or None if it may.

        Committing to an unknown group without a generation creates it, as Kafka does.
        """
        group = self._registry.lookup(group_id)
        if group is None:
            if generation_id >= 0:
                # A member of a generation this coordinator never knew.
                return ErrorCode.illegal_generation
            self._registry.create(group_id)
            return None
        if group.is_(GroupState.DEAD):
            return ErrorCode.coordinator_not_available
        if group.is_static_fenced(member_id, group_instance_id):
            return ErrorCode.fenced_instance_id
        if generation_id < 0 and group.is_(EMPTY):
            # Consumers using assign() store offsets without joining (Spark does).
            return None
        if not group.has_member(member_id):
            return ErrorCode.unknown_member_id
        if generation_id != group.generation_id:
            return ErrorCode.illegal_generation
        if group.is_(COMPLETING):
            return ErrorCode.rebalance_in_progress
        self._rebalancer.touch(group.members[member_id])
        return None

    def fetch_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, CommittedOffset | None]:
        """Committed offsets of the named partitions (None where nothing is committed),
        or of every partition the group has committed when `partitions` is None."""
        stored = self._registry.offsets.of_group(group_id)
        if partitions is None:
            return dict(stored)
        return {partition: stored.get(partition) for partition in partitions}

    def delete_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition]
    ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        """OffsetDelete: (group error, per-partition errors), by Kafka's rules.

        A group with members keeps the offsets of topics it is subscribed to
        (GROUP_SUBSCRIBED_TO_TOPIC) and may only lose the others if it speaks the
        consumer protocol, whose metadata says what it subscribes to.
        """
        group = self._registry.lookup(group_id)
        if group is None or group.is_(GroupState.DEAD):
            return ErrorCode.group_id_not_found, {}
        subscribed: frozenset[str] = frozenset()
        if not group.is_(EMPTY):
            if group.protocol_type != "consumer":
                return ErrorCode.non_empty_group, {}
            subscribed = group.subscribed_topics()
        results: dict[TopicPartition, ErrorCode] = {}
        for topic, partition in partitions:
            if topic in subscribed:
                results[(topic, partition)] = ErrorCode.group_subscribed_to_topic
            else:
                self._registry.offsets.delete(group_id, topic, partition)
                results[(topic, partition)] = ErrorCode.none
        return ErrorCode.none, results
