"""JoinGroup: how a member enters a classic group, or comes back to it.

Joining has the most cases of any group request (new, pending, static and known
members, each with Kafka's own error for each way it can go wrong), so it lives
apart from the coordinator (groups.py), which only awaits the outcome.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass

from kio.schema.errors import ErrorCode

from kafkatest.emulator.state.groups.classic.membership import Group
from kafkatest.emulator.state.groups.classic.model import (
    UNKNOWN_MEMBER_ID,
    GroupState,
    JoinRequest,
    JoinResult,
    Member,
)
from kafkatest.emulator.state.groups.classic.rebalance import COMPLETING, STABLE, Rebalancer
from kafkatest.emulator.state.groups.clock import Clock
from kafkatest.emulator.state.groups.registry import GroupRegistry


@dataclass(eq=False)
class GroupJoiner:
    """Admits members into the registry's groups and starts the rebalances joins cause."""

    _clock: Clock
    _registry: GroupRegistry
    _rebalancer: Rebalancer
    _min_session_timeout_ms: int
    _max_session_timeout_ms: int

    def join(self, request: JoinRequest) -> JoinResult | asyncio.Future[JoinResult]:
        """The result at once, or a future the end of the rebalance answers."""

        def fail(error: ErrorCode) -> JoinResult:
            return JoinResult(error=error, member_id=request.member_id)

        if not request.group_id:
            return fail(ErrorCode.invalid_group_id)
        timeout = request.session_timeout_ms
        if not (self._min_session_timeout_ms <= timeout <= self._max_session_timeout_ms):
            return fail(ErrorCode.invalid_session_timeout)
        is_new_member = request.member_id == UNKNOWN_MEMBER_ID
        group = self._registry.lookup(request.group_id)
        if group is None:
            if not is_new_member:
                return fail(ErrorCode.unknown_member_id)
            group = self._registry.create(request.group_id)
            self._rebalancer.record(group)
        if group.is_(GroupState.DEAD):
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
        unchanged = member.protocols == request.protocols
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
        if group.is_(STABLE) and old.protocols == request.protocols:
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
