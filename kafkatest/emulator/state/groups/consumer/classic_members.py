"""Classic consumers inside a KIP-848 consumer group: JoinGroup, SyncGroup, Heartbeat and
LeaveGroup answered from server-side assignment (Kafka's classicGroup*ToConsumerGroup).

During a rolling upgrade a group holds members of both protocols. A classic member's
JoinGroup updates its subscription like a heartbeat would, and is answered at once with
its member epoch as the generation and no leader, so it never assigns; its SyncGroup
returns what the broker assigned it, written in the consumer protocol. Its Heartbeat
says REBALANCE_IN_PROGRESS whenever it must rejoin to move towards its target (the
group epoch moved, it must give up partitions, or partitions it waits for are free),
and then it has its rebalance timeout to rejoin and to sync, or it is fenced.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from kio.schema.errors import ErrorCode

from kafkatest.emulator.protocol.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    MalformedConsumerProtocol,
    read_subscription,
    subscription_version,
    write_assignment,
)
from kafkatest.emulator.state.groups.classic.model import (
    UNKNOWN_MEMBER_ID,
    JoinRequest,
    JoinResult,
    LeavingMember,
    SyncResult,
)
from kafkatest.emulator.state.groups.clock import TimerHandle
from kafkatest.emulator.state.groups.consumer.checks import copy_member
from kafkatest.emulator.state.groups.consumer.coordinator import ConsumerGroupCoordinator
from kafkatest.emulator.state.groups.consumer.model import (
    ClassicMembership,
    ConsumerGroup,
    ConsumerMember,
    HeartbeatError,
    MemberState,
    Partitions,
    find_member,
)


def kafka_member_id() -> str:
    """A member id as Kafka's Uuid prints it (22 URL-safe base64 characters)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


@dataclass
class ClassicMembers:
    """The classic protocol's requests against a consumer group of `consumer`."""

    consumer: ConsumerGroupCoordinator

    # -- JoinGroup ---------------------------------------------------------------------

    def join(self, group: ConsumerGroup, request: JoinRequest) -> JoinResult:
        try:
            return self._join(group, request)
        except HeartbeatError as refusal:
            # Kafka answers a join its consumer group refuses with the error alone.
            return JoinResult(refusal.error, UNKNOWN_MEMBER_ID)

    def _join(self, group: ConsumerGroup, request: JoinRequest) -> JoinResult:
        member_id = request.member_id or kafka_member_id()
        if not group.supports_classic(request.protocol_type, (p.name for p in request.protocols)):
            raise HeartbeatError(
                ErrorCode.inconsistent_group_protocol,
                f"Member {member_id}'s protocols are not supported.",
            )
        instance_id = request.group_instance_id
        unknown = request.member_id == UNKNOWN_MEMBER_ID
        if unknown and instance_id is None and request.require_known_member_id:
            return JoinResult(ErrorCode.member_id_required, member_id)
        try:
            subscription = read_subscription(request.protocols[0].metadata)
        except MalformedConsumerProtocol as error:
            # Kafka fails such a join with an IllegalStateException (UNKNOWN_SERVER_ERROR).
            raise HeartbeatError(
                ErrorCode.unknown_server_error,
                "Malformed embedded consumer protocol in subscription deserialization.",
            ) from error
        old, member = self._member(group, member_id, instance_id)
        group.release(member)
        if instance_id is not None:
            member.instance_id = instance_id
        if subscription.rack_id is not None:
            member.rack_id = subscription.rack_id
        if request.rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = request.rebalance_timeout_ms
        member.subscribed_topic_names = tuple(sorted(set(subscription.topics)))
        member.client_id = request.client_id
        member.client_host = request.client_host
        member.classic = ClassicMembership(request.session_timeout_ms, request.protocols)
        group.put_member(member)
        self.consumer.groups[group.group_id] = group
        owned = self._topic_ids(subscription.owned)
        self.consumer.settle(group, member, old, owned)
        _cancel(member, "join_timer")
        self._expect_sync(group, member)
        return JoinResult(
            error=ErrorCode.none,
            member_id=member.member_id,
            generation_id=member.member_epoch,
            protocol_type=CONSUMER_PROTOCOL_TYPE,
            protocol_name=member.classic.protocol_name,
        )

    def _member(
        self, group: ConsumerGroup, member_id: str, instance_id: str | None
    ) -> tuple[ConsumerMember | None, ConsumerMember]:
        """Kafka's getOrMaybeSubscribe*ConsumerGroupMember for a classic joiner: an unknown
        id joins; a static member's instance id is taken over by the newcomer."""
        if instance_id is not None:
            static_id = group.static_members.get(instance_id)
            static = group.members.get(static_id) if static_id is not None else None
            if static is not None and static.member_id != member_id:
                return copy_member(static), group.replace_static(static, member_id)
        existing = group.members.get(member_id)
        if existing is None:
            return None, ConsumerMember(member_id)
        return copy_member(existing), existing

    def _topic_ids(self, owned: dict[str, tuple[int, ...]]) -> Partitions:
        ids: dict[uuid.UUID, frozenset[int]] = {}
        for name, partitions in owned.items():
            topic_id = self.consumer.topic_id(name)
            if topic_id is not None:
                ids[topic_id] = ids.get(topic_id, frozenset()) | frozenset(partitions)
        return ids

    # -- SyncGroup and Heartbeat -----------------------------------------------------

    def sync(
        self,
        group: ConsumerGroup,
        member_id: str,
        instance_id: str | None,
        generation_id: int,
        protocol_type: str | None,
        protocol_name: str | None,
    ) -> SyncResult:
        try:
            member = self._validate(group, member_id, instance_id, generation_id)
        except HeartbeatError as refusal:
            return SyncResult(refusal.error)
        assert member.classic is not None
        if (protocol_type is not None and protocol_type != CONSUMER_PROTOCOL_TYPE) or (
            protocol_name is not None and protocol_name != member.classic.protocol_name
        ):
            return SyncResult(ErrorCode.inconsistent_group_protocol)
        if (
            group.group_epoch > member.member_epoch
            and member.state is not MemberState.UNREVOKED_PARTITIONS
        ):
            self._expect_rejoin(group, member)
            return SyncResult(ErrorCode.rebalance_in_progress)
        _cancel(member, "sync_timer")
        self.consumer.watch_session(group, member)
        return SyncResult(
            ErrorCode.none, self._assignment_bytes(member), protocol_type, protocol_name
        )

    def _assignment_bytes(self, member: ConsumerMember) -> bytes:
        assert member.classic is not None
        try:
            version = subscription_version(member.classic.protocols[0].metadata)
        except MalformedConsumerProtocol:
            version = 0
        by_name: dict[str, tuple[int, ...]] = {}
        for _, name, parts in self.consumer.known_partitions(member.assigned):
            by_name[name] = tuple(sorted(parts))
        return write_assignment(version, by_name)

    def heartbeat(
        self, group: ConsumerGroup, member_id: str, instance_id: str | None, generation_id: int
    ) -> ErrorCode:
        try:
            member = self._validate(group, member_id, instance_id, generation_id)
        except HeartbeatError as refusal:
            return refusal.error
        self.consumer.watch_session(group, member)
        if (
            member.member_epoch < group.group_epoch
            or member.state is MemberState.UNREVOKED_PARTITIONS
            or (
                member.state is MemberState.UNRELEASED_PARTITIONS
                and not group.waiting_on_unreleased(member)
            )
        ):
            self._expect_rejoin(group, member)
            return ErrorCode.rebalance_in_progress
        return ErrorCode.none

    def _validate(
        self, group: ConsumerGroup, member_id: str, instance_id: str | None, generation_id: int
    ) -> ConsumerMember:
        member = self._known(group, member_id, instance_id)
        if generation_id != member.member_epoch:
            raise HeartbeatError(
                ErrorCode.illegal_generation,
                f"The request generation id {generation_id} is not equal to the member epoch "
                f"{member.member_epoch} of member {member.member_id}.",
            )
        return member

    def _known(
        self, group: ConsumerGroup, member_id: str, instance_id: str | None
    ) -> ConsumerMember:
        """Kafka's validateConsumerGroupMember, then: the member must speak classic."""
        member = find_member(
            group,
            member_id,
            instance_id,
            f"Member with instance id {instance_id} is not a member of group {group.group_id}.",
        )
        if member.classic is None:
            raise HeartbeatError(
                ErrorCode.unknown_member_id,
                f"Member {member.member_id} does not use the classic protocol.",
            )
        return member

    # -- LeaveGroup ------------------------------------------------------------------

    def leave(
        self, group: ConsumerGroup, leaving: Iterable[LeavingMember]
    ) -> tuple[tuple[LeavingMember, ErrorCode], ...]:
        """Each leaver's outcome; the epoch moves once for all who left."""
        outcomes: list[tuple[LeavingMember, ErrorCode]] = []
        removed: list[str] = []
        for who in leaving:
            try:
                if who.group_instance_id is None:
                    member = self._known(group, who.member_id, None)
                else:
                    # Admin tools remove static members by instance id alone.
                    member_id = who.member_id
                    if member_id == UNKNOWN_MEMBER_ID:
                        static_id = group.static_members.get(who.group_instance_id, "")
                        member_id = static_id
                    member = self._known(group, member_id, who.group_instance_id)
            except HeartbeatError as refusal:
                outcomes.append((who, refusal.error))
                continue
            removed.append(member.member_id)
            outcomes.append(
                (LeavingMember(member.member_id, who.group_instance_id), ErrorCode.none)
            )
        self.consumer.remove_members(group, removed)
        return tuple(outcomes)

    # -- timers ------------------------------------------------------------------------

    def _expect_rejoin(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        """Told to rejoin, a member has its rebalance timeout to do so (if not already told)."""
        if member.join_timer is None:
            member.join_timer = self._deadline(group, member, "join_timer")

    def _expect_sync(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        _cancel(member, "sync_timer")
        member.sync_timer = self._deadline(group, member, "sync_timer")

    def _deadline(self, group: ConsumerGroup, member: ConsumerMember, slot: str) -> TimerHandle:
        clock = self.consumer.clock

        def expire() -> None:
            if group.members.get(member.member_id) is member and getattr(member, slot) is timer:
                setattr(member, slot, None)
                self.consumer.fence_from_timer(group, member.member_id, again)

        def again() -> None:  # a fencing Kafka's conversion refused, tried again
            if group.members.get(member.member_id) is member and getattr(member, slot) is None:
                self.consumer.fence_from_timer(group, member.member_id, again)

        timer = clock.call_at(clock.now_ms() + max(member.rebalance_timeout_ms, 0), expire)
        return timer


def _cancel(member: ConsumerMember, slot: str) -> None:
    timer = getattr(member, slot)
    if timer is not None:
        timer.cancel()
        setattr(member, slot, None)
