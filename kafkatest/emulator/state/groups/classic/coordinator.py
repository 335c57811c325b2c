"""The classic consumer group coordinator: membership, rebalances and committed offsets.

It follows the broker's observable behaviour (states, error codes, who waits for
whom) because real clients depend on it, but knows nothing of the wire: handlers
turn requests into calls here and results back into responses. JoinGroup and
SyncGroup are coroutines that wait for the rest of the group, and every timeout
(session, rebalance, initial delay) runs on a `Clock` so tests can fast-forward.

This module is the one face handlers see; joining (group_join), committed offsets
(group_offsets), the transitions and timers (group_rebalance) and which groups
exist (group_registry) each live in their own module behind it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kio.schema.errors import ErrorCode

from kafkatest.emulator.state.groups.classic.join import GroupJoiner
from kafkatest.emulator.state.groups.classic.membership import Group
from kafkatest.emulator.state.groups.classic.model import (
    UNKNOWN_MEMBER_ID,
    GroupDescription,
    GroupEvent,
    GroupListing,
    GroupState,
    JoinRequest,
    JoinResult,
    LeaveResult,
    LeavingMember,
    Member,
    SyncResult,
)
from kafkatest.emulator.state.groups.classic.offsets import GroupOffsets, TopicPartition
from kafkatest.emulator.state.groups.classic.rebalance import (
    EMPTY,
    PREPARING,
    STABLE,
    Rebalancer,
)
from kafkatest.emulator.state.groups.clock import Clock, LoopClock
from kafkatest.emulator.state.groups.lookups import RecentLookups
from kafkatest.emulator.state.groups.offsets import CommittedOffset, OffsetStore
from kafkatest.emulator.state.groups.registry import GroupRegistry

DEAD = GroupState.DEAD

__all__ = ["GroupCoordinator", "GroupCoordinatorConfig", "TopicPartition"]


@dataclass(frozen=True)
class GroupCoordinatorConfig:
    #: Kafka waits 3 s for more members of a new group; tests want no wait at all.
    initial_rebalance_delay_ms: int = 0
    #: The least a new group's first join waits for more members (see
    #: `group_rebalance.NEW_GROUP_JOIN_WINDOW_MS`, what the broker uses); 0 here, so
    #: the state machine alone completes a join at once.
    new_group_join_window_ms: int = 0
    #: Kafka's group.min.session.timeout.ms: a client asking for less gets INVALID_SESSION_TIMEOUT.
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1_800_000
    max_offset_metadata_bytes: int = 4096


class GroupCoordinator:
    """All classic groups of one emulated cluster (the single broker coordinates all)."""

    def __init__(
        self,
        clock: Clock | None = None,
        config: GroupCoordinatorConfig | None = None,
        offsets: OffsetStore | None = None,
    ):
        """`offsets` is the broker's store, shared so that deleting a topic (which
        forgets its offsets there) and commits made elsewhere stay consistent."""
        self._clock: Clock = clock or LoopClock()
        self._config = config or GroupCoordinatorConfig()
        self._offsets = offsets if offsets is not None else OffsetStore()
        self._registry = GroupRegistry(self._offsets)
        self._lookups = RecentLookups()
        self._rebalancer = Rebalancer(
            self._clock,
            self._config.initial_rebalance_delay_ms,
            self._registry.groups,
            self._offsets,
            self._config.new_group_join_window_ms,
            self._lookups,
        )
        self._joiner = GroupJoiner(
            self._clock,
            self._registry,
            self._rebalancer,
            self._config.min_session_timeout_ms,
            self._config.max_session_timeout_ms,
        )
        self._group_offsets = GroupOffsets(
            self._clock, self._registry, self._rebalancer, self._config.max_offset_metadata_bytes
        )

    # -- inspection ----------------------------------------------------------------

    @property
    def clock(self) -> Clock:
        """The clock the sessions and rebalances are timed on."""
        return self._clock

    def group(self, group_id: str) -> Group | None:
        return self._registry.lookup(group_id)

    def group_ids(self) -> list[str]:
        return self._registry.group_ids()

    def coordinator_looked_up(self, group_id: str) -> None:
        """A client asked which broker coordinates `group_id`: a member may be coming
        (a new group's join window waits for it, see group_lookups)."""
        self._lookups.note(group_id, self._clock.now_ms())

    # -- JoinGroup (state.group_join) ---------------------------------------------

    async def join_group(self, request: JoinRequest) -> JoinResult:
        """Returns once this member's join completes: at once, or when the rebalance ends."""
        outcome = self._joiner.join(request)
        if isinstance(outcome, JoinResult):
            return outcome
        # Shielded: a client hanging up must not cancel the group's bookkeeping.
        return await asyncio.shield(outcome)

    # -- SyncGroup, Heartbeat, LeaveGroup -------------------------------------------

    async def sync_group(
        self,
        group_id: str,
        member_id: str,
        generation_id: int,
        group_instance_id: str | None = None,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        assignments: Mapping[str, bytes] | None = None,
    ) -> SyncResult:
        """Followers wait here until the leader's SyncGroup brings their assignment."""
        outcome = self._sync(
            group_id,
            member_id,
            generation_id,
            group_instance_id,
            protocol_type,
            protocol_name,
            assignments or {},
        )
        if isinstance(outcome, SyncResult):
            return outcome
        return await asyncio.shield(outcome)

    def _sync(
        self,
        group_id: str,
        member_id: str,
        generation_id: int,
        group_instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
        assignments: Mapping[str, bytes],
    ) -> SyncResult | asyncio.Future[SyncResult]:
        if not group_id:
            return SyncResult(ErrorCode.invalid_group_id)
        group = self._registry.lookup(group_id)
        if group is None:
            return SyncResult(ErrorCode.unknown_member_id)
        error = self._check_member(group, member_id, group_instance_id, generation_id)
        if error is not None:
            return SyncResult(error)
        if (protocol_type is not None and protocol_type != group.protocol_type) or (
            protocol_name is not None and protocol_name != group.protocol_name
        ):
            return SyncResult(ErrorCode.inconsistent_group_protocol)
        member = group.members[member_id]
        if group.is_(PREPARING):
            return SyncResult(ErrorCode.rebalance_in_progress)
        group.pending_sync.discard(member_id)
        if group.is_(STABLE):
            self._rebalancer.touch(member)
            return self._assignment_of(group, member)
        waiter: asyncio.Future[SyncResult] = asyncio.get_running_loop().create_future()
        member.sync_waiters.append(waiter)
        if group.is_leader(member_id):
            self._install_assignments(group, assignments)
        return waiter

    def _install_assignments(self, group: Group, assignments: Mapping[str, bytes]) -> None:
        now = self._clock.now_ms()
        for member in group.members.values():
            member.assignment = assignments.get(member.member_id, b"")
            member.heartbeat_deadline_ms = now + member.session_timeout_ms
        group.on(GroupEvent.ASSIGNED)
        self._rebalancer.record(group)
        for member in group.members.values():
            member.answer_sync(self._assignment_of(group, member))

    def _assignment_of(self, group: Group, member: Member) -> SyncResult:
        return SyncResult(
            ErrorCode.none, member.assignment, group.protocol_type, group.protocol_name
        )

    def _check_member(
        self, group: Group, member_id: str, group_instance_id: str | None, generation_id: int
    ) -> ErrorCode | None:
        """The checks SyncGroup and Heartbeat share, in Kafka's order."""
        if group.is_(DEAD):
            return ErrorCode.coordinator_not_available
        if group.is_static_fenced(member_id, group_instance_id):
            return ErrorCode.fenced_instance_id
        if not group.has_member(member_id):
            return ErrorCode.unknown_member_id
        if generation_id != group.generation_id:
            return ErrorCode.illegal_generation
        return None

    def heartbeat(
        self,
        group_id: str,
        member_id: str,
        generation_id: int,
        group_instance_id: str | None = None,
    ) -> ErrorCode:
        if not group_id:
            return ErrorCode.invalid_group_id
        group = self._registry.lookup(group_id)
        if group is None:
            return ErrorCode.unknown_member_id
        error = self._check_member(group, member_id, group_instance_id, generation_id)
        if error is not None:
            return error
        self._rebalancer.touch(group.members[member_id])
        if group.is_(PREPARING):
            return ErrorCode.rebalance_in_progress
        return ErrorCode.none

    def leave_group(self, group_id: str, members: Iterable[LeavingMember]) -> LeaveResult:
        leaving = list(members)
        if not group_id:
            return LeaveResult(ErrorCode.invalid_group_id)
        group = self._registry.lookup(group_id)
        if group is None:
            unknown = ErrorCode.unknown_member_id
            return LeaveResult(ErrorCode.none, tuple((m, unknown) for m in leaving))
        if group.is_(DEAD):
            return LeaveResult(ErrorCode.coordinator_not_available)
        outcomes = tuple((m, self._remove_leaving(group, m)) for m in leaving)
        self._rebalancer.after_members_removed(group)
        self._rebalancer.forget_if_unused(group)
        return LeaveResult(ErrorCode.none, outcomes)

    def _remove_leaving(self, group: Group, leaving: LeavingMember) -> ErrorCode:
        member_id = leaving.member_id
        if leaving.group_instance_id is not None:
            current = group.static_members.get(leaving.group_instance_id)
            if current is None:
                return ErrorCode.unknown_member_id
            # Admin tools remove static members by instance id alone.
            if member_id not in (UNKNOWN_MEMBER_ID, current):
                return ErrorCode.fenced_instance_id
            member_id = current
        elif group.pending_members.pop(member_id, None) is not None:
            return ErrorCode.none
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.unknown_member_id
        self._rebalancer.drop_member(group, member, ErrorCode.unknown_member_id)
        return ErrorCode.none

    # -- offsets (state.group_offsets) ----------------------------------------------

    def commit_offsets(
        self,
        group_id: str,
        offsets: Mapping[TopicPartition, CommittedOffset],
        generation_id: int = -1,
        member_id: str = UNKNOWN_MEMBER_ID,
        group_instance_id: str | None = None,
    ) -> dict[TopicPartition, ErrorCode]:
        """Store offsets if the committer may; one error per partition, as the wire wants."""
        error = self.check_committer(group_id, generation_id, member_id, group_instance_id)
        if error is not None:
            return dict.fromkeys(offsets, error)
        return self._group_offsets.store(group_id, offsets)

    def check_committer(
        self, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None
    ) -> ErrorCode | None:
        """Whether this member may commit for the group (TxnOffsetCommit asks too)."""
        return self._group_offsets.commit_error(
            group_id, generation_id, member_id, group_instance_id
        )

    def fetch_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, CommittedOffset | None]:
        """Committed offsets of the named partitions (None where nothing is committed),
        or of every partition the group has committed when `partitions` is None."""
        return self._group_offsets.fetch_offsets(group_id, partitions)

    def delete_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition]
    ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        """OffsetDelete: (group error, per-partition errors), by Kafka's rules."""
        return self._group_offsets.delete_offsets(group_id, partitions)

    # -- admin -----------------------------------------------------------------------

    def list_groups(self, states: Iterable[str] | None = None) -> list[GroupListing]:
        """`states` match case-insensitively, as Kafka's ListGroups v4 filter does."""
        wanted_states = {s.lower() for s in states} if states else None
        listings = []
        for group_id in self.group_ids():
            group = self._registry.groups[group_id]
            if wanted_states is not None and group.state.value.lower() not in wanted_states:
                continue
            listings.append(GroupListing(group.group_id, group.protocol_type or "", group.state))
        return listings

    def describe_group(self, group_id: str) -> GroupDescription:
        """An unknown group is reported as Dead without error, as classic Kafka does."""
        group = self._registry.lookup(group_id)
        if group is None:
            return GroupDescription(ErrorCode.none, group_id, DEAD, "", "")
        return group.describe()

    def delete_groups(self, group_ids: Iterable[str]) -> dict[str, ErrorCode]:
        results: dict[str, ErrorCode] = {}
        for group_id in group_ids:
            group = self._registry.lookup(group_id)
            if group is None or group.is_(DEAD):
                results[group_id] = ErrorCode.group_id_not_found
            elif not group.is_(EMPTY):
                results[group_id] = ErrorCode.non_empty_group
            else:
                self._rebalancer.cancel_join_timer(group)
                self._rebalancer.cancel_sync_timer(group)
                group.on(GroupEvent.DELETED)
                del self._registry.groups[group_id]
                self._offsets.delete_group(group_id)
                if self._offsets.records is not None:
                    self._offsets.records.group_removed(group_id)
                results[group_id] = ErrorCode.none
        return results

    # -- online migration (state.group_migration) -------------------------------------

    def retire(self, group_id: str) -> None:
        """The group became a consumer group: members still waiting on a join or sync are
        told to rejoin, and the group goes, its offsets staying with the id."""
        group = self._registry.groups.pop(group_id, None)
        if group is None:
            return
        self._rebalancer.cancel_join_timer(group)
        self._rebalancer.cancel_sync_timer(group)
        for member in group.members.values():
            self._rebalancer.fail_waiters(member, ErrorCode.rebalance_in_progress)
        if self._offsets.records is not None:
            self._offsets.records.group_removed(group_id)

    def adopt(self, group: Group) -> None:
        """A consumer group came back as this classic group (Stable, members holding their
        assignments): it is recorded, and a rebalance makes the members rejoin."""
        self._registry.groups[group.group_id] = group
        self._rebalancer.record(group)
        for member in group.members.values():
            self._rebalancer.watch_session(group, member)
        self._rebalancer.prepare_rebalance(group)

    def shutdown(self) -> None:
        """Answer everyone still waiting, so that a stopping server leaves no hung task."""
        for group in self._registry.groups.values():
            self._rebalancer.cancel_join_timer(group)
            self._rebalancer.cancel_sync_timer(group)
            for member in group.members.values():
                self._rebalancer.fail_waiters(member, ErrorCode.coordinator_not_available)
