"""How a classic group moves between generations: the transitions and their timers.

Kept apart from the request-facing coordinator (groups.py) so that every rule for
starting, completing and abandoning a rebalance, and for evicting silent members,
lives in one place that every request path calls into.
"""

from __future__ import annotations

from kio.schema.errors import ErrorCode

from kafkatest.emulator.state.groups.classic.membership import Group, NoCandidateProtocol
from kafkatest.emulator.state.groups.classic.model import (
    UNKNOWN_MEMBER_ID,
    GroupEvent,
    GroupState,
    JoinResult,
    Member,
    SyncResult,
)
from kafkatest.emulator.state.groups.clock import Clock
from kafkatest.emulator.state.groups.lookups import RecentLookups
from kafkatest.emulator.state.groups.offsets import OffsetStore

#: A new group's first join stays open at least this long from the first sign of
#: its members (the first coordinator lookup of the group, see group_lookups, or else
#: the first join), even with `group.initial.rebalance.delay.ms=0`. Kafka never
#: completes an initial rebalance inside the join that starts it (its timer fires
#: after the requests already in flight), so consumers started together share the
#: first generation there (measured: four librdkafka consumers in one generation
#: within 0.13 s on Kafka 4.1 with the delay at 0); completing at once split them and
#: made three wait for the next heartbeat (3 s). 60 ms covers librdkafka's 50 ms
#: between a lost first lookup and the next one.
NEW_GROUP_JOIN_WINDOW_MS = 60
#: The window stays open until no member has arrived, or looked the coordinator up,
#: for this long. Extending it whenever anyone had arrived during it (as Kafka does
#: with its delay set) cost four consumers started together 20 ms more although they
#: all arrive within 5 ms; extending it by a whole window cost 40 ms more. With
#: Kafka's delay set the emulator follows Kafka exactly.
NEW_GROUP_SETTLE_MS = 20

PREPARING = GroupState.PREPARING_REBALANCE
COMPLETING = GroupState.COMPLETING_REBALANCE
STABLE = GroupState.STABLE
EMPTY = GroupState.EMPTY


class Rebalancer:
    """Transitions shared by every request path; `groups` is the coordinator's registry."""

    def __init__(
        self,
        clock: Clock,
        initial_rebalance_delay_ms: int,
        groups: dict[str, Group],
        offsets: OffsetStore,
        new_group_join_window_ms: int = 0,
        lookups: RecentLookups | None = None,
    ):
        self._clock = clock
        self._lookups = lookups if lookups is not None else RecentLookups()
        self._min_window_ms = new_group_join_window_ms
        self._offsets = offsets
        #: Kafka's initial delay, and never less than the new-group window.
        self._initial_window_ms = max(initial_rebalance_delay_ms, new_group_join_window_ms)
        #: Kafka's own delay re-arms by itself; the emulator's window by its quiet time.
        self._kafka_delay_ms = initial_rebalance_delay_ms
        self._quiet_ms = min(self._initial_window_ms, NEW_GROUP_SETTLE_MS)
        self._groups = groups

    # -- rebalancing ---------------------------------------------------------------

    def rebalance_or_complete(self, group: Group) -> None:
        if group.is_(PREPARING):
            self.try_complete_join(group)
        else:
            self.prepare_rebalance(group)

    def prepare_rebalance(self, group: Group) -> None:
        if group.is_(COMPLETING):
            # Kafka's resetAndPropagateAssignmentWithError: the assignments being
            # handed out are void.
            for member in group.members.values():
                member.assignment = b""
                self.fail_sync_waiters(member, ErrorCode.rebalance_in_progress)
        self.cancel_sync_timer(group)
        group.pending_sync.clear()
        was_empty = group.is_(EMPTY)
        group.on(GroupEvent.REBALANCE)
        rebalance_timeout = group.rebalance_timeout_ms()
        if was_empty and self._initial_window_ms > 0:
            group.initial_delay_active = True
            group.window_opened_ms = self._clock.now_ms()
            first_delay_ms = self._initial_window_ms
            if self._kafka_delay_ms == 0:
                first_delay_ms = max(1, self._window_end_ms(group) - self._clock.now_ms())
            self.schedule_initial_delay(
                group,
                min(first_delay_ms, rebalance_timeout),
                len(group.members),
                rebalance_timeout,
            )
        else:
            deadline = self._clock.now_ms() + rebalance_timeout
            group.join_timer = self._clock.call_at(deadline, lambda: self.complete_join(group))
        self.try_complete_join(group)

    def schedule_initial_delay(
        self, group: Group, delay_ms: int, members_seen: int, remaining_ms: int
    ) -> None:
        """Kafka's initial delay: keep waiting while new members keep arriving."""

        def expired() -> None:
            left = remaining_ms - delay_ms
            more_ms = self._initial_wait_to_add_ms(group, members_seen)
            if more_ms > 0 and left > 0:
                next_delay = min(more_ms, left)
                self.schedule_initial_delay(group, next_delay, len(group.members), left)
            else:
                self.complete_join(group)

        group.join_timer = self._clock.call_at(self._clock.now_ms() + delay_ms, expired)

    def _initial_wait_to_add_ms(self, group: Group, members_seen: int) -> int:
        """How much longer a new group waits once its window (or delay) has run out."""
        if self._kafka_delay_ms > 0:
            # Kafka's InitialDelayedJoin: anyone new during the delay earns another
            # whole delay.
            return self._kafka_delay_ms if len(group.members) > members_seen else 0
        # The emulator's window: open while members are still arriving.
        return self._window_end_ms(group) - self._clock.now_ms()

    def _window_end_ms(self, group: Group) -> int:
        """When the emulator's window for a new group closes: its minimum length from
        the first sign of a member, and a quiet time after the latest one."""
        opened_ms = group.window_opened_ms
        last_seen_ms = group.last_member_added_ms
        burst = self._lookups.burst(group.group_id, self._clock.now_ms())
        if burst is not None:
            opened_ms = min(opened_ms, burst.first_ms)
            last_seen_ms = max(last_seen_ms, burst.last_ms)
        return max(opened_ms + self._min_window_ms, last_seen_ms + self._quiet_ms)

    def record(self, group: Group) -> None:
        """Write the group's metadata record, as Kafka's coordinator does at each
        state it persists (created, assignment installed, fallen empty)."""
        if self._offsets.records is not None:
            self._offsets.records.group_changed(
                group.group_id, group.metadata_record(self._clock.now_ms())
            )

    def try_complete_join(self, group: Group) -> None:
        if group.is_(PREPARING) and not group.initial_delay_active and group.all_members_rejoined():
            self.complete_join(group)

    def complete_join(self, group: Group) -> None:
        """End the join phase: drop who did not rejoin, start the next generation."""
        if not group.is_(PREPARING) or self._groups.get(group.group_id) is not group:
            return
        self.cancel_join_timer(group)
        staying = {i: m for i, m in group.members.items() if m.awaiting_join}
        try:
            protocol = group.select_protocol(staying) if staying else None
        except NoCandidateProtocol:
            # Kafka's vote throws and its completion is undone, the join timer dropped:
            # the group stays rebalancing and its joins wait, until clients give up.
            return
        group.initial_delay_active = False
        for member in [m for m in group.members.values() if not m.awaiting_join]:
            self.drop_member(group, member, ErrorCode.unknown_member_id)
        group.generation_id += 1
        if not group.members:
            group.on(GroupEvent.EMPTIED)
            group.protocol_name = None
            group.leader_id = None
            self.record(group)
            return
        group.protocol_name = protocol
        if group.leader_id not in group.members:
            group.leader_id = next(iter(group.members))
        group.on(GroupEvent.JOINED)
        group.pending_sync = set(group.members)
        now = self._clock.now_ms()
        for member in group.members.values():
            member.heartbeat_deadline_ms = now + member.session_timeout_ms
            member.answer_join(group.join_result_for(member.member_id))
        generation = group.generation_id
        group.sync_timer = self._clock.call_at(
            now + group.rebalance_timeout_ms(), lambda: self.expire_pending_sync(group, generation)
        )

    def expire_pending_sync(self, group: Group, generation: int) -> None:
        """Members that never sent SyncGroup for this generation are gone (Kafka 2.8+)."""
        if group.generation_id != generation or not group.pending_sync:
            return
        if not group.is_(COMPLETING, STABLE):
            return
        for member_id in list(group.pending_sync):
            member = group.members.get(member_id)
            if member is not None:
                self.drop_member(group, member, ErrorCode.unknown_member_id)
        self.after_members_removed(group)

    def after_members_removed(self, group: Group) -> None:
        if group.is_(STABLE, COMPLETING):
            self.prepare_rebalance(group)
        elif group.is_(PREPARING):
            self.try_complete_join(group)

    def drop_member(self, group: Group, member: Member, error: ErrorCode) -> None:
        """Remove a member's data and answer whatever it is waiting for with `error`."""
        del group.members[member.member_id]
        instance_id = member.group_instance_id
        if instance_id is not None and group.static_members.get(instance_id) == member.member_id:
            del group.static_members[instance_id]
        group.pending_sync.discard(member.member_id)
        if group.leader_id == member.member_id:
            group.leader_id = next(iter(group.members), None)
        self.fail_waiters(member, error)

    def fail_waiters(self, member: Member, error: ErrorCode) -> None:
        member.answer_join(JoinResult(error=error, member_id=UNKNOWN_MEMBER_ID))
        self.fail_sync_waiters(member, error)

    def fail_sync_waiters(self, member: Member, error: ErrorCode) -> None:
        member.answer_sync(SyncResult(error=error))

    def cancel_join_timer(self, group: Group) -> None:
        if group.join_timer is not None:
            group.join_timer.cancel()
            group.join_timer = None

    def cancel_sync_timer(self, group: Group) -> None:
        if group.sync_timer is not None:
            group.sync_timer.cancel()
            group.sync_timer = None

    # -- sessions --------------------------------------------------------------------

    def watch_session(self, group: Group, member: Member) -> None:
        """One lazy timer chain per member: heartbeats only move the deadline."""

        def check() -> None:
            if group.members.get(member.member_id) is not member:
                return
            if self._groups.get(group.group_id) is not group:
                return
            now = self._clock.now_ms()
            if member.awaiting_join or member.awaiting_sync:
                # Waiting on the coordinator is not a reason to be evicted.
                self._clock.call_at(now + member.session_timeout_ms, check)
            elif now < member.heartbeat_deadline_ms:
                self._clock.call_at(member.heartbeat_deadline_ms, check)
            else:
                self.drop_member(group, member, ErrorCode.unknown_member_id)
                self.after_members_removed(group)

        self._clock.call_at(member.heartbeat_deadline_ms, check)

    def expire_pending(self, group: Group, member_id: str) -> None:
        if group.pending_members.pop(member_id, None) is None:
            return
        if group.is_(PREPARING):
            self.try_complete_join(group)
        self.forget_if_unused(group)

    def touch(self, member: Member) -> None:
        member.heartbeat_deadline_ms = self._clock.now_ms() + member.session_timeout_ms

    def forget_if_unused(self, group: Group) -> None:
        """A group that never formed and holds nothing (e.g. a rejected join) vanishes."""
        if (
            group.is_(EMPTY)
            and group.generation_id == 0
            and not group.members
            and not group.pending_members
            and not self._offsets.of_group(group.group_id)
            and self._groups.get(group.group_id) is group
        ):
            del self._groups[group.group_id]
