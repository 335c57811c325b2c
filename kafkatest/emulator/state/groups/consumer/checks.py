"""What a ConsumerGroupHeartbeat, an OffsetCommit or an OffsetFetch must satisfy before
a consumer group acts on it: Kafka's request validation in GroupCoordinatorService and
the member-epoch checks of ConsumerGroup and GroupMetadataManager, and which member a
heartbeat is about (`member_to_update`)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace

from kio.schema.errors import ErrorCode

from kafkatest.emulator.state.groups.consumer.model import (
    JOIN_EPOCH,
    LEAVE_EPOCH,
    STATIC_LEAVE_EPOCH,
    ConsumerGroup,
    ConsumerMember,
    HeartbeatError,
    HeartbeatRequest,
    is_subset,
)

#: KIP-1082: from v1 the client makes its own member id.
_CLIENT_MEMBER_ID_SINCE = 1
#: Consumer-protocol members must commit with OffsetCommit v9+ (member epochs).
_MEMBER_EPOCH_COMMIT_SINCE = 9


def validate_heartbeat(request: HeartbeatRequest, assignors: tuple[str, ...]) -> None:
    """Kafka's GroupCoordinatorService checks, before any group is looked at."""
    epoch = request.member_epoch
    if not request.member_id and (
        request.version >= _CLIENT_MEMBER_ID_SINCE or epoch > 0 or epoch == LEAVE_EPOCH
    ):
        raise HeartbeatError(ErrorCode.invalid_request, "MemberId can't be empty.")
    for value, name in (
        (request.group_id, "GroupId"),
        (request.instance_id, "InstanceId"),
        (request.rack_id, "RackId"),
    ):
        if value is not None and not value:
            raise HeartbeatError(ErrorCode.invalid_request, f"{name} can't be empty.")
    if epoch == JOIN_EPOCH:
        if request.rebalance_timeout_ms == -1:
            raise HeartbeatError(
                ErrorCode.invalid_request,
                "RebalanceTimeoutMs must be provided in first request.",
            )
        if request.owned is None or request.owned:
            raise HeartbeatError(
                ErrorCode.invalid_request, "TopicPartitions must be empty when (re-)joining."
            )
        if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
            raise HeartbeatError(
                ErrorCode.invalid_request,
                "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null "
                "when (re-)joining.",
            )
    elif epoch == STATIC_LEAVE_EPOCH:
        if request.instance_id is None:
            raise HeartbeatError(ErrorCode.invalid_request, "InstanceId can't be null.")
    elif epoch < STATIC_LEAVE_EPOCH:
        raise HeartbeatError(ErrorCode.invalid_request, "MemberEpoch is invalid.")
    assignor = request.server_assignor
    if assignor is not None and assignor not in assignors:
        raise HeartbeatError(
            ErrorCode.unsupported_assignor,
            f"ServerAssignor {assignor} is not supported. "
            f"Supported assignors: {', '.join(assignors)}.",
        )


def check_epoch(member: ConsumerMember, request: HeartbeatRequest) -> None:
    """Kafka's throwIfConsumerGroupMemberEpochIsInvalid, with its lost-response tolerance."""
    received = request.member_epoch
    if received > member.member_epoch:
        raise HeartbeatError(
            ErrorCode.fenced_member_epoch,
            f"The consumer group member has a greater member epoch ({received}) than the one "
            f"known by the group coordinator ({member.member_epoch}). The member must abandon "
            "all its partitions and rejoin.",
        )
    if received < member.member_epoch and (
        received != member.previous_epoch or not is_subset(request.owned, member.assigned)
    ):
        raise HeartbeatError(
            ErrorCode.fenced_member_epoch,
            f"The consumer group member has a smaller member epoch ({received}) than the one "
            f"known by the group coordinator ({member.member_epoch}). The member must abandon "
            "all its partitions and rejoin.",
        )


@dataclass(frozen=True)
class CommitCheck:
    """A consumer group's judgement of an OffsetCommit or TxnOffsetCommit: `error`
    refuses it whole; with an epoch older than the member's, each partition is judged
    by the epoch it was assigned to the member at (`partition_error`, Kafka 4.3)."""

    error: ErrorCode | None = None
    member: ConsumerMember | None = None
    epoch: int = 0
    stale: ErrorCode = ErrorCode.stale_member_epoch

    def partition_error(self, topic_id: uuid.UUID | None, partition: int) -> ErrorCode | None:
        if self.member is None:
            return None
        assigned_at = self.member.assignment_epochs.get((topic_id, partition)) if topic_id else None
        if assigned_at is None or self.epoch < assigned_at:
            return self.stale
        return None


def commit_error(
    group: ConsumerGroup,
    member_id: str,
    epoch: int,
    api_version: int,
    transactional: bool = False,
    instance_id: str | None = None,
) -> CommitCheck:
    """Kafka's ConsumerGroup.validateOffsetCommit (OffsetCommit carries no message);
    TxnOffsetCommit turns a stale epoch into ILLEGAL_GENERATION, as Kafka does."""
    if epoch < 0 and not group.members:
        return CommitCheck()
    if transactional and epoch == -1 and not member_id and instance_id is None:
        return CommitCheck()
    member = group.members.get(member_id)
    if member is None:
        return CommitCheck(ErrorCode.unknown_member_id)
    classic = member.classic is not None
    if not transactional and not classic and api_version < _MEMBER_EPOCH_COMMIT_SINCE:
        return CommitCheck(ErrorCode.unsupported_version)
    # A classic member's generation is its member epoch.
    stale = (
        ErrorCode.illegal_generation if transactional or classic else ErrorCode.stale_member_epoch
    )
    if epoch > member.member_epoch:
        return CommitCheck(stale)
    if epoch < member.member_epoch:
        return CommitCheck(member=member, epoch=epoch, stale=stale)
    return CommitCheck()


def fetch_error(group: ConsumerGroup, member_id: str | None, epoch: int) -> ErrorCode | None:
    """Kafka's ConsumerGroup.validateOffsetFetch (OffsetFetch v9 names the member)."""
    if member_id is None and epoch < 0:
        return None
    member = group.members.get(member_id or "")
    if member is None:
        return ErrorCode.unknown_member_id
    if epoch != member.member_epoch:
        if member.classic is not None:
            return ErrorCode.illegal_generation
        return ErrorCode.stale_member_epoch
    return None


def member_to_update(
    group: ConsumerGroup, request: HeartbeatRequest, member_id: str, joining: bool
) -> tuple[ConsumerMember | None, ConsumerMember]:
    """(the member as it was, the member to update): Kafka's getOrMaybeSubscribe*Member."""
    instance_id = request.instance_id
    if instance_id is None:
        existing = group.members.get(member_id)
        if existing is None:
            if not joining:
                raise HeartbeatError(
                    ErrorCode.unknown_member_id,
                    f"Member {member_id} is not a member of group {group.group_id}.",
                )
            return None, ConsumerMember(member_id)
        check_epoch(existing, request)
        return copy_member(existing), existing
    static_id = group.static_members.get(instance_id)
    static = group.members.get(static_id) if static_id is not None else None
    if joining:
        if static is None:
            existing = group.members.get(member_id)
            if existing is not None:
                check_epoch(existing, request)
                return copy_member(existing), existing
            return None, ConsumerMember(member_id)
        if static.member_epoch != STATIC_LEAVE_EPOCH:
            raise HeartbeatError(
                ErrorCode.unreleased_instance_id,
                f"Static member {member_id} with instance id {instance_id} cannot join the "
                f"group because the instance id is owned by {static.member_id} member.",
            )
        # The returning instance takes over the old member's assignment under its new id.
        return copy_member(static), group.replace_static(static, member_id)
    if static is None:
        raise HeartbeatError(ErrorCode.unknown_member_id, f"Instance id {instance_id} is unknown.")
    if static.member_id != member_id:
        raise HeartbeatError(
            ErrorCode.fenced_instance_id,
            f"Static member {member_id} with instance id {instance_id} was fenced by member "
            f"{static.member_id}.",
        )
    check_epoch(static, request)
    return copy_member(static), static


def copy_member(member: ConsumerMember) -> ConsumerMember:
    """A detached copy: no timers of its own yet."""
    return replace(
        member, rebalance_timer=None, join_timer=None, sync_timer=None, session_deadline_ms=0
    )
