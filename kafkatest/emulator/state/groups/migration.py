"""Online migration between classic and KIP-848 consumer groups, as Kafka 4.1 does it
with its default `group.consumer.migration.policy=bidirectional`.

Upgrade: the first ConsumerGroupHeartbeat to a live classic group whose members speak
the consumer embedded protocol turns it into a consumer group. Each classic member
keeps its assignment, as a member at the classic generation (which becomes the group
epoch) whose target is what it holds; the newcomer then moves the epoch on, so the
classic members are told to rejoin and give up what the new assignment takes away.

Downgrade: when the last member speaking the consumer protocol leaves (or is fenced)
and classic members remain, the group becomes a classic group again at the group
epoch, its members holding their target assignments, and a rebalance starts so they
rejoin as a classic group.
"""

from __future__ import annotations

import uuid

from kio.schema.errors import ErrorCode

from kafkatest.emulator.protocol.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    MalformedConsumerProtocol,
    read_assignment,
    read_subscription,
    subscription_version,
    write_assignment,
)
from kafkatest.emulator.state.groups.classic.coordinator import GroupCoordinator
from kafkatest.emulator.state.groups.classic.membership import Group
from kafkatest.emulator.state.groups.classic.model import GroupState, Member
from kafkatest.emulator.state.groups.consumer.coordinator import ConsumerGroupCoordinator
from kafkatest.emulator.state.groups.consumer.model import (
    ClassicMembership,
    ConsumerGroup,
    ConsumerMember,
    HeartbeatError,
    Partitions,
)


class GroupMigration:
    def __init__(self, classic: GroupCoordinator, consumer: ConsumerGroupCoordinator) -> None:
        self._classic = classic
        self._consumer = consumer

    # -- upgrade -----------------------------------------------------------------------

    def upgraded(self, classic: Group) -> ConsumerGroup:
        """The consumer group a live classic group becomes; registered by the heartbeat
        that asked for it, and only then is the classic group retired (`retire`)."""
        group_id = classic.group_id
        if classic.protocol_type != CONSUMER_PROTOCOL_TYPE:
            raise HeartbeatError(
                ErrorCode.group_id_not_found,
                f"Cannot upgrade classic group {group_id} to consumer group because the group "
                "does not use the consumer embedded protocol.",
            )
        group = ConsumerGroup(
            group_id, group_epoch=classic.generation_id, assignment_epoch=classic.generation_id
        )
        for member in classic.members.values():
            converted = self._member(classic, member)
            group.targets[converted.member_id] = dict(converted.assigned)
            group.put_member(converted)
        group.metadata = self._consumer.subscription_metadata(group)
        return group

    def _member(self, classic: Group, member: Member) -> ConsumerMember:
        group_id = classic.group_id
        protocol = classic.protocol_name or member.protocols[0].name
        try:
            subscription = read_subscription(member.metadata_for(protocol))
            assignment = read_assignment(member.assignment) if member.assignment else None
        except MalformedConsumerProtocol as error:
            raise HeartbeatError(
                ErrorCode.group_id_not_found,
                f"Cannot upgrade classic group {group_id} to consumer group because the "
                "embedded consumer protocol is malformed.",
            ) from error
        if assignment is not None and assignment.has_user_data:
            raise HeartbeatError(
                ErrorCode.group_id_not_found,
                f"Cannot upgrade classic group {group_id} to consumer group because an "
                "unsupported custom assignor is in use. Please refer to the documentation or "
                "switch to a default assignor before re-attempting the upgrade.",
            )
        assigned: dict[uuid.UUID, frozenset[int]] = {}
        for name, partitions in (assignment.partitions if assignment else {}).items():
            topic_id = self._consumer.topic_id(name)
            if topic_id is not None:
                assigned[topic_id] = assigned.get(topic_id, frozenset()) | frozenset(partitions)
        generation = classic.generation_id
        return ConsumerMember(
            member_id=member.member_id,
            instance_id=member.group_instance_id,
            rack_id=subscription.rack_id,
            client_id=member.client_id,
            client_host=member.client_host,
            member_epoch=generation,
            previous_epoch=generation,
            rebalance_timeout_ms=member.rebalance_timeout_ms,
            subscribed_topic_names=tuple(sorted(set(subscription.topics))),
            assigned=assigned,
            assignment_epochs={
                (topic_id, partition): generation
                for topic_id, parts in assigned.items()
                for partition in parts
            },
            classic=ClassicMembership(member.session_timeout_ms, member.protocols),
        )

    def retire(self, group: ConsumerGroup) -> None:
        """The upgrade took: the classic group goes, its waiting members told to rejoin,
        and the converted members' sessions start (on their classic session timeouts)."""
        self._classic.retire(group.group_id)
        for member in group.members.values():
            if member.classic is not None:
                self._consumer.watch_session(group, member)

    # -- downgrade ---------------------------------------------------------------------

    def downgrade(self, group: ConsumerGroup, leaving_id: str) -> bool:
        """Called before `leaving_id` is removed: if only classic members would be left,
        the group becomes classic (True); otherwise nothing happens (False)."""
        others = [m for m in group.members.values() if m.member_id != leaving_id]
        if not others or any(m.classic is None for m in others):
            return False
        classic = Group(
            group.group_id,
            state=GroupState.STABLE,
            generation_id=group.group_epoch,
            protocol_type=CONSUMER_PROTOCOL_TYPE,
        )
        for member in others:
            assert member.classic is not None
            classic.members[member.member_id] = Member(
                member_id=member.member_id,
                group_instance_id=member.instance_id,
                client_id=member.client_id,
                client_host=member.client_host,
                session_timeout_ms=member.classic.session_timeout_ms,
                rebalance_timeout_ms=member.rebalance_timeout_ms,
                protocol_type=CONSUMER_PROTOCOL_TYPE,
                protocols=member.classic.protocols,
                heartbeat_deadline_ms=self._consumer.clock.now_ms()
                + member.classic.session_timeout_ms,
            )
            if member.instance_id is not None:
                classic.static_members[member.instance_id] = member.member_id
        classic.protocol_name = classic.select_protocol()
        classic.leader_id = next(iter(classic.members))
        for member in others:
            target = group.targets.get(member.member_id, {})
            classic.members[member.member_id].assignment = self._assignment_bytes(
                classic.members[member.member_id], classic.protocol_name, target
            )
        for member in group.members.values():
            member.cancel_timers()
        del self._consumer.groups[group.group_id]
        self._classic.adopt(classic)
        return True

    def _assignment_bytes(self, member: Member, protocol: str, target: Partitions) -> bytes:
        try:
            version = subscription_version(member.metadata_for(protocol))
        except MalformedConsumerProtocol:
            version = 0
        by_name = {
            name: tuple(sorted(parts)) for _, name, parts in self._consumer.known_partitions(target)
        }
        return write_assignment(version, by_name)


def installed(classic: GroupCoordinator, consumer: ConsumerGroupCoordinator) -> GroupMigration:
    """The migration between this broker's two coordinators, wired so that a consumer
    group losing its last consumer-protocol member is handed back."""
    migration = GroupMigration(classic, consumer)
    consumer.downgrade = migration.downgrade
    return migration
