"""The classic consumer group coordinator: membership, rebalances and committed offsets.

It follows the broker's observable behaviour (states, error codes, who waits for
whom) because real clients depend on it, but knows nothing of the wire: handlers
turn requests into calls here and results back into responses. JoinGroup and
SyncGroup are coroutines that wait for the rest of the group, and every timeout
(session, rebalance, initial delay) runs on a `Clock` so tests can fast-forward.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kio.schema.errors import ErrorCode

from kafkatest.emulator.state.group_clock import Clock, LoopClock
from kafkatest.emulator.state.group_membership import Group
from kafkatest.emulator.state.group_model import (
    UNKNOWN_MEMBER_ID,
    GroupDescription,
    GroupListing,
    GroupState,
    JoinRequest,
    JoinResult,
    LeaveResult,
    LeavingMember,
    Member,
    SyncResult,
)
from kafkatest.emulator.state.group_rebalance import (
    COMPLETING,
    EMPTY,
    PREPARING,
    STABLE,
    Rebalancer,
)
from kafkatest.emulator.state.offsets import CommittedOffset, OffsetStore

DEAD = GroupState.DEAD

TopicPartition = tuple[str, int]


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
        self._groups: dict[str, Group] = {}
        self._rebalancer = Rebalancer(
            self._clock,
            self._config.initial_rebalance_delay_ms,
            self._groups,
            self._offsets,
            self._config.new_group_join_window_ms,
        )

    # -- inspection ----------------------------------------------------------------

    def group(self, group_id: str) -> Group | None:
        return self._lookup(group_id)

    def group_ids(self) -> list[str]:
        for group_id in self._offsets.groups():
            self._lookup(group_id)
        return list(self._groups)

    def _lookup(self, group_id: str) -> Group | None:
        """Groups known only by committed offsets exist too, as Empty groups."""
        group = self._groups.get(group_id)
        if group is None and self._offsets.of_group(group_id):
            group = self._groups[group_id] = Group(group_id)
        return group

    # -- JoinGroup -----------------------------------------------------------------

    async def join_group(self, request: JoinRequest) -> JoinResult:
        """Returns once this member's join completes: at once, or when the rebalance ends."""
        outcome = self._join(request)
        if isinstance(outcome, JoinResult):
            return outcome
        # Shielded: a client hanging up must not cancel the group's bookkeeping.
        return await asyncio.shield(outcome)

    def _join(self, request: JoinRequest) -> JoinResult | asyncio.Future[JoinResult]:
        def fail(error: ErrorCode) -> JoinResult:
            return JoinResult(error=error, member_id=request.member_id)

        if not request.group_id:
            return fail(ErrorCode.invalid_group_id)
        timeout = request.session_timeout_ms
        if not (
            self._config.min_session_timeout_ms <= timeout <= self._config.max_session_timeout_ms
        ):
            return fail(ErrorCode.invalid_session_timeout)
        is_new_member = request.member_id == UNKNOWN_MEMBER_ID
        group = self._lookup(request.group_id)
        if group is None:
            if not is_new_member:
                return fail(ErrorCode.unknown_member_id)
            group = self._groups[request.group_id] = Group(request.group_id)
            self._rebalancer.record(group)
        if group.is_(DEAD):
            return fail(ErrorCode.coordinator_not_available)
        if is_new_member:
            outcome = self._join_new_member(group, request)
        else:
            outcome = self._join_known_member(group, request)
        self._rebalancer.forget_if_unused(group)
        return outcome

    def _join_new_member(
        self, group: Group, request: JoinRequest
    ) -> JoinResult | asyncio.Future[JoinResult]:
        if not group.supports(request.protocol_type, request.protocols):
            return JoinResult(ErrorCode.inconsistent_group_protocol, request.member_id)
        instance_id = request.group_instance_id
        if instance_id is not None and instance_id in group.static_members:
            return self._replace_static_member(group, request, instance_id)
        member_id = f"{instance_id or request.client_id}-{uuid.uuid4()}"
        if instance_id is None and request.require_known_member_id:
            deadline = self._clock.now_ms() + request.session_timeout_ms
            group.pending_members[member_id] = deadline
            self._clock.call_at(deadline, lambda: self._rebalancer.expire_pending(group, member_id))
            return JoinResult(ErrorCode.member_id_required, member_id)
        return self._add_member(group, request, member_id)

    def _join_known_member(
        self, group: Group, request: JoinRequest
    ) -> JoinResult | asyncio.Future[JoinResult]:
        member_id = request.member_id
        if member_id in group.pending_members:
            if not group.supports(request.protocol_type, request.protocols):
                return JoinResult(ErrorCode.inconsistent_group_protocol, member_id)
            del group.pending_members[member_id]
            return self._add_member(group, request, member_id)
        if group.is_static_fenced(member_id, request.group_instance_id):
            return JoinResult(ErrorCode.fenced_instance_id, member_id)
        member = group.members.get(member_id)
        if member is None:
            return JoinResult(ErrorCode.unknown_member_id, member_id)
        if not group.supports(request.protocol_type, request.protocols):
            return JoinResult(ErrorCode.inconsistent_group_protocol, member_id)
        unchanged = member.same_protocols(request.protocols)
        if group.is_(COMPLETING) and unchanged:
            # It lost our JoinGroup response; repeat it rather than rebalance again.
            return group.join_result_for(member_id)
        if group.is_(STABLE) and unchanged and not group.is_leader(member_id):
            return group.join_result_for(member_id)
        # A changed subscription, or the leader rejoining (it saw metadata change).
        self._update_member(member, request)
        waiter = self._await_join(member)
        self._rebalancer.rebalance_or_complete(group)
        return waiter

    def _add_member(
        self, group: Group, request: JoinRequest, member_id: str
    ) -> asyncio.Future[JoinResult]:
        member = self._new_member(request, member_id)
        if not group.members:
            group.protocol_type = request.protocol_type
        group.members[member_id] = member
        group.last_member_added_ms = self._clock.now_ms()
        if request.group_instance_id is not None:
            group.static_members[request.group_instance_id] = member_id
        if group.leader_id is None:
            group.leader_id = member_id
        waiter = self._await_join(member)
        self._rebalancer.watch_session(group, member)
        self._rebalancer.rebalance_or_complete(group)
        return waiter

    def _replace_static_member(
        self, group: Group, request: JoinRequest, instance_id: str
    ) -> JoinResult | asyncio.Future[JoinResult]:
        """A restarted static member takes over its old identity and assignment."""
        old = group.members.pop(group.static_members[instance_id])
        self._rebalancer.fail_waiters(old, ErrorCode.fenced_instance_id)
        new_id = f"{instance_id}-{uuid.uuid4()}"
        member = self._new_member(request, new_id, assignment=old.assignment)
        group.members[new_id] = member
        group.static_members[instance_id] = new_id
        if group.leader_id == old.member_id:
            group.leader_id = new_id
        if old.member_id in group.pending_sync:
            group.pending_sync.discard(old.member_id)
            group.pending_sync.add(new_id)
        self._rebalancer.watch_session(group, member)
        if group.is_(STABLE) and old.same_protocols(request.protocols):
            return group.join_result_for(new_id, skip_assignment=group.is_leader(new_id))
        waiter = self._await_join(member)
        self._rebalancer.rebalance_or_complete(group)
        return waiter

    def _new_member(self, request: JoinRequest, member_id: str, assignment: bytes = b"") -> Member:
        return Member(
            member_id=member_id,
            group_instance_id=request.group_instance_id,
            client_id=request.client_id,
            client_host=request.client_host,
            session_timeout_ms=request.session_timeout_ms,
            rebalance_timeout_ms=request.rebalance_timeout_ms,
            protocol_type=request.protocol_type,
            protocols=request.protocols,
            heartbeat_deadline_ms=self._clock.now_ms() + request.session_timeout_ms,
            assignment=assignment,
        )

    def _update_member(self, member: Member, request: JoinRequest) -> None:
        member.protocols = request.protocols
        member.session_timeout_ms = request.session_timeout_ms
        member.rebalance_timeout_ms = request.rebalance_timeout_ms

    def _await_join(self, member: Member) -> asyncio.Future[JoinResult]:
        waiter: asyncio.Future[JoinResult] = asyncio.get_running_loop().create_future()
        member.join_waiters.append(waiter)
        return waiter

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
        group = self._lookup(group_id)
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
        group.state = STABLE
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
        group = self._lookup(group_id)
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
        group = self._lookup(group_id)
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

    # -- offsets ---------------------------------------------------------------------

    def commit_offsets(
        self,
        group_id: str,
        offsets: Mapping[TopicPartition, CommittedOffset],
        generation_id: int = -1,
        member_id: str = UNKNOWN_MEMBER_ID,
        group_instance_id: str | None = None,
    ) -> dict[TopicPartition, ErrorCode]:
        """Store offsets if the committer may; one error per partition, as the wire wants."""
        error = self._commit_error(group_id, generation_id, member_id, group_instance_id)
        if error is not None:
            return dict.fromkeys(offsets, error)
        now = self._clock.now_ms()
        results: dict[TopicPartition, ErrorCode] = {}
        for partition, committed in offsets.items():
            metadata_size = len((committed.metadata or "").encode())
            if metadata_size > self._config.max_offset_metadata_bytes:
                results[partition] = ErrorCode.offset_metadata_too_large
                continue
            if committed.commit_timestamp_ms < 0:
                committed = dataclasses.replace(committed, commit_timestamp_ms=now)
            self._offsets.commit(group_id, *partition, committed)
            results[partition] = ErrorCode.none
        return results

    def check_committer(
        self, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None
    ) -> ErrorCode | None:
        """Whether this member may commit for the group (TxnOffsetCommit asks too)."""
        return self._commit_error(group_id, generation_id, member_id, group_instance_id)

    def _commit_error(
        self, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None
    ) -> ErrorCode | None:
        group = self._lookup(group_id)
        if group is None:
            if generation_id >= 0:
                # A member of a generation this coordinator never knew.
                return ErrorCode.illegal_generation
            self._groups[group_id] = Group(group_id)
            return None
        if group.is_(DEAD):
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
        stored = self._offsets.of_group(group_id)
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
        group = self._lookup(group_id)
        if group is None or group.is_(DEAD):
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
                self._offsets.delete(group_id, topic, partition)
                results[(topic, partition)] = ErrorCode.none
        return ErrorCode.none, results

    # -- admin -----------------------------------------------------------------------

    def list_groups(self, states: Iterable[str] | None = None) -> list[GroupListing]:
        """`states` match case-insensitively, as Kafka's ListGroups v4 filter does."""
        wanted_states = {s.lower() for s in states} if states else None
        listings = []
        for group_id in self.group_ids():
            group = self._groups[group_id]
            if wanted_states is not None and group.state.value.lower() not in wanted_states:
                continue
            listings.append(GroupListing(group.group_id, group.protocol_type or "", group.state))
        return listings

    def describe_group(self, group_id: str) -> GroupDescription:
        """An unknown group is reported as Dead without error, as classic Kafka does."""
        group = self._lookup(group_id)
        if group is None:
            return GroupDescription(ErrorCode.none, group_id, DEAD, "", "")
        return group.describe()

    def delete_groups(self, group_ids: Iterable[str]) -> dict[str, ErrorCode]:
        results: dict[str, ErrorCode] = {}
        for group_id in group_ids:
            group = self._lookup(group_id)
            if group is None or group.is_(DEAD):
                results[group_id] = ErrorCode.group_id_not_found
            elif not group.is_(EMPTY):
                results[group_id] = ErrorCode.non_empty_group
            else:
                self._rebalancer.cancel_join_timer(group)
                self._rebalancer.cancel_sync_timer(group)
                group.state = DEAD
                del self._groups[group_id]
                self._offsets.delete_group(group_id)
                if self._offsets.records is not None:
                    self._offsets.records.group_removed(group_id)
                results[group_id] = ErrorCode.none
        return results

    # -- online migration (state.group_migration) -------------------------------------

    def retire(self, group_id: str) -> None:
        """The group became a consumer group: members still waiting on a join or sync are
        told to rejoin, and the group goes, its offsets staying with the id."""
        group = self._groups.pop(group_id, None)
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
        self._groups[group.group_id] = group
        self._rebalancer.record(group)
        for member in group.members.values():
            self._rebalancer.watch_session(group, member)
        self._rebalancer.prepare_rebalance(group)

    def shutdown(self) -> None:
        """Answer everyone still waiting, so that a stopping server leaves no hung task."""
        for group in self._groups.values():
            self._rebalancer.cancel_join_timer(group)
            self._rebalancer.cancel_sync_timer(group)
            for member in group.members.values():
                self._rebalancer.fail_waiters(member, ErrorCode.coordinator_not_available)
