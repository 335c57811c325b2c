"""The KIP-848 consumer group coordinator: ConsumerGroupHeartbeat and its bookkeeping.

It follows Kafka's `GroupMetadataManager.consumerGroupHeartbeat`: validate, get or
create the group and member, bump the group epoch when subscriptions or subscribed
topics change, recompute the target assignment for a newer group epoch with the
server-side assignor, reconcile the member, and answer with its epoch and (when it
changed) its assignment. Regular expressions are resolved against the topics after
the answer, as Kafka's asynchronous refresh does. Sessions and revocation deadlines
are timers on the broker clock. Which group ids are consumer groups rather than
classic ones is decided by `state.group_namespace`, which calls in here. Request
validation, epoch checks and which member a heartbeat is about are in `checks`, regex
compilation in `regex`, the broker's and each group's intervals in `settings`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable

from kio.schema.errors import ErrorCode

from kafkatest.emulator.state.groups.classic.membership import NoCandidateProtocol
from kafkatest.emulator.state.groups.clock import Clock
from kafkatest.emulator.state.groups.consumer.assignors import AssignorMember, assign
from kafkatest.emulator.state.groups.consumer.checks import member_to_update
from kafkatest.emulator.state.groups.consumer.model import (
    JOIN_EPOCH,
    LEAVE_EPOCH,
    STATIC_LEAVE_EPOCH,
    ConsumerGroup,
    ConsumerMember,
    HeartbeatRequest,
    HeartbeatResult,
    MemberState,
    Partitions,
    find_member,
    reconcile,
)
from kafkatest.emulator.state.groups.consumer.regex import compile_regex, validate_regex
from kafkatest.emulator.state.groups.consumer.settings import ConsumerGroupConfig, GroupIntervals
from kafkatest.emulator.state.topics import TopicRegistry

#: Kafka's GroupMetadataManager.REGEX_BATCH_REFRESH_MIN_INTERVAL_MS.
_REGEX_MIN_REFRESH_MS = 10_000
#: Kafka's coordinator runs a failed timer operation that may be retried again after
#: this long (CoordinatorTimer's default retry backoff).
TIMER_RETRY_BACKOFF_MS = 500


class ConsumerGroupCoordinator:
    def __init__(
        self,
        clock: Clock,
        topics: TopicRegistry,
        config: ConsumerGroupConfig,
        intervals: GroupIntervals | None = None,
    ) -> None:
        self._clock = clock
        self._topics = topics
        self.config = config
        self.intervals = intervals or GroupIntervals(config)
        self.groups: dict[str, ConsumerGroup] = {}
        #: Asked before a member is removed: hands the group back to the classic
        #: coordinator when only classic members would be left (True: it did).
        self.downgrade: Callable[[ConsumerGroup, str], bool] | None = None

    # -- ConsumerGroupHeartbeat ------------------------------------------------------

    def heartbeat(self, request: HeartbeatRequest, group: ConsumerGroup) -> HeartbeatResult:
        """One validated heartbeat to `group` (new and not yet registered when joining)."""
        if request.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
            return self._leave(group, request)
        joining = request.member_epoch == JOIN_EPOCH
        regex = request.subscribed_topic_regex
        if regex and not group.has_regex_subscribers(regex):
            validate_regex(regex)
        member_id = request.member_id or str(uuid.uuid4())
        old, member = member_to_update(group, request, member_id, joining)
        self.groups[group.group_id] = group
        group.release(member)
        self._update(member, request)
        group.put_member(member)
        before_assigned = member.assigned
        self.settle(group, member, old, request.owned)
        full = (
            request.rebalance_timeout_ms != -1
            and (
                request.subscribed_topic_names is not None
                or request.subscribed_topic_regex is not None
            )
            and request.owned is not None
        )
        changed = joining or full or member.assigned != before_assigned
        result = HeartbeatResult(
            member_id=member.member_id,
            member_epoch=member.member_epoch,
            heartbeat_interval_ms=self.intervals.heartbeat_interval_ms(group.group_id),
            assignment=dict(member.assigned) if changed else None,
        )
        self._refresh_regexes(group, request.topic_visible)
        return result

    def settle(
        self,
        group: ConsumerGroup,
        member: ConsumerMember,
        old: ConsumerMember | None,
        owned: Partitions | None,
    ) -> None:
        """After a member (re)joined or heartbeated, registered as it is now: move the
        group epoch if its subscription or the subscribed topics changed, recompute the
        target assignment for a newer epoch, and walk the member towards its target
        (Kafka's steps 1-3 of a heartbeat, shared with classic members' JoinGroup)."""
        names_before = old.subscribed_topic_names if old else ()
        regex_before = old.subscribed_topic_regex if old else None
        bump = member.subscribed_topic_names != names_before
        new_regex = member.subscribed_topic_regex
        if new_regex != regex_before and new_regex and new_regex in group.resolved_regexes:
            bump = True
        metadata = self.subscription_metadata(group)
        if metadata != group.metadata:
            group.metadata = metadata
            bump = True
        if bump:
            group.group_epoch += 1
        if group.group_epoch > group.assignment_epoch:
            self._assign(group)
        before = (member.member_epoch, member.state, member.assigned, member.pending_revocation)
        group.release(member)
        reconcile(
            member,
            group.assignment_epoch,
            group.targets.get(member.member_id, {}),
            lambda topic, p: group.partition_epochs.get((topic, p)),
            owned,
        )
        group.put_member(member)
        after = (member.member_epoch, member.state, member.assigned, member.pending_revocation)
        if after != before or old is None:
            self._watch_revocation(group, member)
        self.watch_session(group, member)

    def _update(self, member: ConsumerMember, request: HeartbeatRequest) -> None:
        if request.instance_id is not None:
            member.instance_id = request.instance_id
        if request.rack_id is not None:
            member.rack_id = request.rack_id
        if request.rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = request.rebalance_timeout_ms
        if request.server_assignor is not None:
            member.server_assignor = request.server_assignor
        if request.subscribed_topic_names is not None:
            member.subscribed_topic_names = tuple(sorted(set(request.subscribed_topic_names)))
        if request.subscribed_topic_regex is not None:
            member.subscribed_topic_regex = request.subscribed_topic_regex
        member.client_id = request.client_id
        member.client_host = request.client_host

    def _leave(self, group: ConsumerGroup, request: HeartbeatRequest) -> HeartbeatResult:
        """Epoch -1 leaves for good; -2 (static members) keeps the seat until the session ends."""
        instance_id = request.instance_id
        member = find_member(
            group, request.member_id, instance_id, f"Instance id {instance_id} is unknown."
        )
        if instance_id is not None and request.member_epoch == STATIC_LEAVE_EPOCH:
            group.release(member)
            member.member_epoch = STATIC_LEAVE_EPOCH
            member.pending_revocation = {}
            # Held from epoch 0 now: the old member id's commits are fenced (Kafka 4.3).
            member.assignment_epochs = dict.fromkeys(member.assignment_epochs, 0)
            group.put_member(member)
            return HeartbeatResult(member_id=member.member_id, member_epoch=STATIC_LEAVE_EPOCH)
        try:
            self.fence(group, member.member_id)
        except NoCandidateProtocol:
            # Kafka's conversion to a classic group throws: the leave fails whole, the
            # member stays, and the answer carries no message.
            return HeartbeatResult(error=ErrorCode.unknown_server_error)
        return HeartbeatResult(member_id=request.member_id, member_epoch=request.member_epoch)

    def fence(self, group: ConsumerGroup, member_id: str) -> None:
        """Remove a member (left, session expired, revocation too slow): the epoch moves on,
        unless only classic members are left and the group goes back to being classic.

        Raises NoCandidateProtocol, changing nothing, when those classic members cannot
        agree on a protocol (Kafka's conversion throws there)."""
        if self.groups.get(group.group_id) is not group or member_id not in group.members:
            # A timer of a group since deleted, emptied or handed back to the classic
            # coordinator: that group object is no longer the id's.
            return
        if self.downgrade is not None and self.downgrade(group, member_id):
            return
        self.remove_members(group, [member_id])

    def fence_from_timer(
        self, group: ConsumerGroup, member_id: str, retry: Callable[[], None]
    ) -> None:
        """A timer's fencing. Where it fails as Kafka's does (`fence`), Kafka's timer
        runs again after its retry backoff, the member staying meanwhile: `retry` (which
        checks again that the member is due) is called then."""
        try:
            self.fence(group, member_id)
        except NoCandidateProtocol:
            self._clock.call_at(self._clock.now_ms() + TIMER_RETRY_BACKOFF_MS, retry)

    def remove_members(self, group: ConsumerGroup, member_ids: Iterable[str]) -> None:
        """Remove members at once, moving the epoch once (a LeaveGroup of several)."""
        removed = [m for m in member_ids if group.remove_member(m) is not None]
        if not removed:
            return
        group.metadata = self.subscription_metadata(group)
        group.group_epoch += 1
        for regex in [r for r in group.resolved_regexes if not group.has_regex_subscribers(r)]:
            del group.resolved_regexes[regex]

    # -- assignment --------------------------------------------------------------------

    def _subscribed_names(self, group: ConsumerGroup, member: ConsumerMember) -> set[str]:
        names = set(member.subscribed_topic_names)
        if member.subscribed_topic_regex:
            names |= group.resolved_regexes.get(member.subscribed_topic_regex, frozenset())
        return names

    def subscription_metadata(self, group: ConsumerGroup) -> tuple[tuple[str, uuid.UUID, int], ...]:
        """What Kafka's metadata hash covers: the subscribed topics that exist, and their size."""
        found = [(name, self._topics.find(name)) for name in sorted(self.subscribed_topics(group))]
        return tuple((n, t.topic_id, len(t.partitions)) for n, t in found if t is not None)

    def _assign(self, group: ConsumerGroup) -> None:
        counts = {topic_id: count for _, topic_id, count in group.metadata}
        order = [topic_id for _, topic_id, _ in group.metadata]
        ids = {name: topic_id for name, topic_id, _ in group.metadata}
        members = [
            AssignorMember(
                member.member_id,
                member.instance_id,
                frozenset(ids[n] for n in self._subscribed_names(group, member) if n in ids),
                group.targets.get(member.member_id, {}),
            )
            for member in group.members.values()
        ]
        assignor = group.preferred_assignor(self.config.assignors[0])
        group.targets = assign(assignor, members, counts, order)
        group.assignment_epoch = group.group_epoch

    def _refresh_regexes(
        self, group: ConsumerGroup, visible: Callable[[str], bool] | None = None
    ) -> None:
        """Resolve the group's regexes when one is new or topics were created, at most
        every 10 s (Kafka's batch refresh), and bump the epoch if the topics changed."""
        regexes = {m.subscribed_topic_regex for m in group.members.values()} - {None, ""}
        if not regexes:
            return
        now = self._clock.now_ms()
        last = group.regex_refreshed_ms
        if last is not None and now <= last + _REGEX_MIN_REFRESH_MS:
            return
        topic_ids = frozenset(t.topic_id for t in self._topics)
        due = (
            last is None
            or any(r not in group.resolved_regexes for r in regexes)
            or not topic_ids <= group.regex_topic_ids
            or now > last + self.config.regex_refresh_interval_ms
        )
        if not due:
            return
        # Since KAFKA-18813 a regex resolves only to the topics the member whose
        # heartbeat triggered the resolution may describe.
        names = [t.name for t in self._topics if visible is None or visible(t.name)]
        resolved: dict[str, frozenset[str]] = {}
        for regex in sorted(r for r in regexes if r is not None):
            pattern = compile_regex(regex)
            resolved[regex] = frozenset(n for n in names if pattern.fullmatch(n))
        group.regex_refreshed_ms = now
        group.regex_topic_ids = topic_ids
        changed = any(resolved[r] != group.resolved_regexes.get(r, frozenset()) for r in resolved)
        group.resolved_regexes = resolved
        metadata = self.subscription_metadata(group)
        if changed or metadata != group.metadata:
            group.metadata = metadata
            group.group_epoch += 1

    # -- timers ------------------------------------------------------------------------

    def watch_session(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        """A lazy timer per member: heartbeats only move the deadline. A classic member
        keeps the session timeout it joined with."""
        first = member.session_deadline_ms == 0
        timeout_ms = self.intervals.session_timeout_ms(group.group_id)
        if member.classic is not None:
            timeout_ms = member.classic.session_timeout_ms
        member.session_deadline_ms = self._clock.now_ms() + timeout_ms
        if not first:
            return

        def check() -> None:
            if group.members.get(member.member_id) is not member:
                return
            if self._clock.now_ms() < member.session_deadline_ms:
                self._clock.call_at(member.session_deadline_ms, check)
            else:
                self.fence_from_timer(group, member.member_id, check)

        self._clock.call_at(member.session_deadline_ms, check)

    def _watch_revocation(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        """A member must revoke within its rebalance timeout or be fenced."""
        if member.rebalance_timer is not None:
            member.rebalance_timer.cancel()
            member.rebalance_timer = None
        if member.state is not MemberState.UNREVOKED_PARTITIONS:
            return
        epoch = member.member_epoch

        def expire() -> None:
            if (
                group.members.get(member.member_id) is member
                and member.state is MemberState.UNREVOKED_PARTITIONS
                and member.member_epoch == epoch
            ):
                self.fence_from_timer(group, member.member_id, expire)

        deadline = self._clock.now_ms() + max(member.rebalance_timeout_ms, 0)
        member.rebalance_timer = self._clock.call_at(deadline, expire)

    # -- admin -------------------------------------------------------------------------

    def subscribed_topics(self, group: ConsumerGroup) -> frozenset[str]:
        members = group.members.values()
        return frozenset().union(*(self._subscribed_names(group, m) for m in members))

    @property
    def clock(self) -> Clock:
        return self._clock

    def topic_id(self, name: str) -> uuid.UUID | None:
        topic = self._topics.find(name)
        return None if topic is None else topic.topic_id

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        topic = self._topics.find_by_id(topic_id)
        return None if topic is None else topic.name

    def known_partitions(
        self, partitions: Partitions
    ) -> Iterable[tuple[uuid.UUID, str, frozenset[int]]]:
        """(id, name, partitions) of the topics that still exist, for describing."""
        by_id = {t.topic_id: t.name for t in self._topics}
        for topic_id, parts in partitions.items():
            if topic_id in by_id:
                yield topic_id, by_id[topic_id], parts

    def shutdown(self) -> None:
        for group in self.groups.values():
            for member in group.members.values():
                member.cancel_timers()
