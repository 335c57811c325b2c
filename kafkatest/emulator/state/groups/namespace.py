"""One group id namespace for classic and KIP-848 consumer groups, as Kafka keeps it.

A group id names one group of one type. An *empty* group of one type is simply
replaced when the other protocol arrives. A live classic group of consumers is
upgraded by the first ConsumerGroupHeartbeat (`state.group_migration`), after which
classic members keep speaking their protocol inside the consumer group
(`state.consumer_group_classic`) until the last consumer-protocol member leaves and
the group is classic again. Committed offsets belong to the id throughout. Every
path that could see both types (heartbeats, joins, offsets, admin) asks here first,
so the classic coordinator (`state.groups`) and the consumer one
(`state.consumer_groups`) each only ever see groups of their own type.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kio.schema.errors import ErrorCode

from kafkatest.emulator.state.groups.classic.coordinator import GroupCoordinator
from kafkatest.emulator.state.groups.classic.membership import Group
from kafkatest.emulator.state.groups.classic.model import GroupState
from kafkatest.emulator.state.groups.consumer import checks as consumer_group_checks
from kafkatest.emulator.state.groups.consumer.checks import validate_heartbeat
from kafkatest.emulator.state.groups.consumer.classic_members import ClassicMembers
from kafkatest.emulator.state.groups.consumer.coordinator import ConsumerGroupCoordinator
from kafkatest.emulator.state.groups.consumer.model import (
    JOIN_EPOCH,
    LEAVE_EPOCH,
    STATIC_LEAVE_EPOCH,
    ConsumerGroup,
    ConsumerGroupState,
    HeartbeatError,
    HeartbeatRequest,
    HeartbeatResult,
)
from kafkatest.emulator.state.groups.migration import GroupMigration
from kafkatest.emulator.state.groups.offsets import OffsetStore

CLASSIC = "classic"
CONSUMER = "consumer"


@dataclass(eq=False)
class GroupNamespace:
    classic: GroupCoordinator
    consumer: ConsumerGroupCoordinator
    _offsets: OffsetStore
    _migration: GroupMigration
    #: The classic protocol's requests to a consumer group.
    classic_members: ClassicMembers = field(init=False)

    def __post_init__(self) -> None:
        self.classic_members = ClassicMembers(self.consumer)

    def consumer_group(self, group_id: str) -> ConsumerGroup | None:
        return self.consumer.groups.get(group_id)

    def _classic_in_use(self, group_id: str) -> bool:
        return self._in_use(self.classic.group(group_id))

    @staticmethod
    def _in_use(group: Group | None) -> bool:
        """A classic group with members (an empty one is taken over by either protocol)."""
        return group is not None and bool(group.members or group.pending_members)

    # -- ConsumerGroupHeartbeat -------------------------------------------------------

    def heartbeat(self, request: HeartbeatRequest) -> HeartbeatResult:
        try:
            validate_heartbeat(request, self.consumer.config.assignors)
            upgrading = request.group_id not in self.consumer.groups and self._classic_in_use(
                request.group_id
            )
            group = self._group_for_heartbeat(request)
            result = self.consumer.heartbeat(request, group)
        except HeartbeatError as refusal:
            return HeartbeatResult(error=refusal.error, message=refusal.message)
        if upgrading:
            # The heartbeat joined the group it upgraded: now the classic one goes.
            self._migration.retire(group)
        return result

    def _group_for_heartbeat(self, request: HeartbeatRequest) -> ConsumerGroup:
        """Kafka's getOrMaybeCreateConsumerGroup (joins) and consumerGroup (the rest)."""
        group_id = request.group_id
        existing = self.consumer.groups.get(group_id)
        if existing is not None:
            return existing
        classic = self.classic.group(group_id)
        in_use = self._classic_in_use(group_id)
        if request.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
            message = f"Group {group_id} is not a consumer group." if in_use else None
            raise HeartbeatError(
                ErrorCode.group_id_not_found, message or f"Group {group_id} not found."
            )
        if request.member_epoch != JOIN_EPOCH:
            if in_use:
                message = f"Group {group_id} is not a consumer group."
            else:
                message = f"Consumer group {group_id} not found."
            raise HeartbeatError(ErrorCode.group_id_not_found, message)
        if classic is not None and in_use:
            return self._migration.upgraded(classic)
        return ConsumerGroup(group_id)

    # -- classic protocol against a consumer group -----------------------------------

    def live_consumer_group(self, group_id: str) -> ConsumerGroup | None:
        """For a JoinGroup: the consumer group with members that classic members join;
        an empty one is dropped, so that the join makes the id a classic group."""
        group = self.consumer.groups.get(group_id)
        if group is None:
            return None
        if group.members:
            return group
        del self.consumer.groups[group_id]
        return None

    # -- offsets ---------------------------------------------------------------------

    def commit_error(
        self,
        group_id: str,
        member_id: str,
        epoch: int,
        api_version: int,
        transactional: bool = False,
        instance_id: str | None = None,
    ) -> consumer_group_checks.CommitCheck:
        """A consumer group's judgement of an OffsetCommit or TxnOffsetCommit: what it
        refuses, whole or per partition; the rest goes on to the store (through the
        classic rules, which see such an id as an empty group)."""
        group = self.consumer.groups.get(group_id)
        if group is None:
            return consumer_group_checks.CommitCheck()
        return consumer_group_checks.commit_error(
            group, member_id, epoch, api_version, transactional, instance_id
        )

    def fetch_error(self, group_id: str, member_id: str | None, epoch: int) -> ErrorCode | None:
        """OffsetFetch v9+ names the member: a consumer group checks its epoch."""
        group = self.consumer.groups.get(group_id)
        if group is None:
            return None
        return consumer_group_checks.fetch_error(group, member_id, epoch)

    def exists(self, group_id: str) -> bool:
        return group_id in self.consumer.groups or self.classic.group(group_id) is not None

    def subscribed_topics(self, group_id: str) -> frozenset[str] | None:
        """OffsetDelete on a consumer group: the topics it may not lose (None: not one)."""
        group = self.consumer.groups.get(group_id)
        if group is None:
            return None
        return self.consumer.subscribed_topics(group)

    # -- admin -----------------------------------------------------------------------

    def listings(self, states: set[str] | None) -> list[tuple[str, str, str]]:
        """(group id, group type, state) of consumer groups, by ListGroups' state filter."""
        return [
            (group_id, CONSUMER, group.state.value)
            for group_id, group in self.consumer.groups.items()
            if states is None or group.state.value.lower() in states
        ]

    def is_consumer_group(self, group_id: str) -> bool:
        return group_id in self.consumer.groups

    def delete(self, group_id: str) -> ErrorCode:
        group = self.consumer.groups[group_id]
        if group.state is not ConsumerGroupState.EMPTY:
            return ErrorCode.non_empty_group
        del self.consumer.groups[group_id]
        # Its commits went through the classic rules, which keep an empty group for the
        # id: that goes too, or the id would be listed again as a classic group.
        if self.classic.group(group_id) is not None:
            self.classic.delete_groups([group_id])
        self._offsets.delete_group(group_id)
        return ErrorCode.none

    def classic_state(self, group_id: str) -> GroupState | None:
        group = self.classic.group(group_id)
        return None if group is None else group.state
