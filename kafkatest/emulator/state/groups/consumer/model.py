"""The nouns of KIP-848 consumer groups (ConsumerGroupHeartbeat), free of the wire.

A consumer group's assignment is the broker's decision: the group epoch moves
when membership, subscriptions or subscribed topics change, the target
assignment is recomputed for it, and each member is walked towards its target by
`reconcile` (Kafka's `CurrentAssignmentBuilder`), which never grants a partition
another member has not yet released.
"""

from __future__ import annotations

import enum
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

from kio.schema.errors import ErrorCode

from kafkatest.emulator.state.groups.classic.model import Protocol
from kafkatest.emulator.state.groups.clock import TimerHandle

#: topic id -> partitions; the protocol names topics by id.
Partitions = dict[uuid.UUID, frozenset[int]]

JOIN_EPOCH = 0
LEAVE_EPOCH = -1
#: A static member leaving for a while: it keeps its assignment until its session ends.
STATIC_LEAVE_EPOCH = -2


class ConsumerGroupState(str, enum.Enum):
    """Values are what ConsumerGroupDescribe and ListGroups report."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class MemberState(enum.Enum):
    STABLE = "stable"
    #: Waits for the member to stop reporting partitions it must give up.
    UNREVOKED_PARTITIONS = "unrevoked_partitions"
    #: Waits for other members to release partitions of its target.
    UNRELEASED_PARTITIONS = "unreleased_partitions"


class HeartbeatError(Exception):
    """A refusal with Kafka's error code and message."""

    def __init__(self, error: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


@dataclass(frozen=True)
class HeartbeatRequest:
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    #: -1: unchanged since the last heartbeat.
    rebalance_timeout_ms: int = -1
    #: None fields are "unchanged since the last heartbeat".
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: Partitions | None = None
    client_id: str = ""
    client_host: str = ""
    #: v1 (KIP-1082): the client makes its member id; v0 lets the broker make one.
    version: int = 1
    #: Whether the member may see a topic (its principal's DESCRIBE, with ACLs on;
    #: None: every topic). A regex this heartbeat resolves leaves the others out.
    topic_visible: Callable[[str], bool] | None = None


@dataclass(frozen=True)
class HeartbeatResult:
    error: ErrorCode = ErrorCode.none
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    #: None: unchanged (only sent when it changed or the request was a full one).
    assignment: Partitions | None = None


@dataclass(frozen=True)
class ClassicMembership:
    """A member that joined through JoinGroup (Kafka's ClassicMemberMetadata): its session
    timeout and the protocols it offered, the first of which names its assignor to it."""

    session_timeout_ms: int
    protocols: tuple[Protocol, ...]

    @property
    def protocol_name(self) -> str:
        return self.protocols[0].name


@dataclass
class ConsumerMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    member_epoch: int = 0
    previous_epoch: int = -1
    state: MemberState = MemberState.STABLE
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    assigned: Partitions = field(default_factory=dict)
    pending_revocation: Partitions = field(default_factory=dict)
    #: (topic id, partition) -> the epoch it was assigned to this member at, for each
    #: assigned or pending-revocation partition (Kafka 4.3: an OffsetCommit with an older
    #: member epoch may commit a partition assigned at or before that epoch).
    assignment_epochs: dict[tuple[uuid.UUID, int], int] = field(default_factory=dict)
    session_deadline_ms: int = 0
    rebalance_timer: TimerHandle | None = None
    #: Set for members speaking the classic protocol (JoinGroup, SyncGroup, Heartbeat).
    classic: ClassicMembership | None = None
    #: A classic member told to rejoin must do so, and then sync, within its rebalance
    #: timeout (Kafka's consumer-group join and sync timeouts).
    join_timer: TimerHandle | None = None
    sync_timer: TimerHandle | None = None

    def cancel_timers(self) -> None:
        for timer in (self.rebalance_timer, self.join_timer, self.sync_timer):
            if timer is not None:
                timer.cancel()
        self.rebalance_timer = self.join_timer = self.sync_timer = None

    def reconciled_to(self, epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == epoch

    def with_epoch(self, epoch: int) -> None:
        self.previous_epoch, self.member_epoch = self.member_epoch, epoch


@dataclass
class ConsumerGroup:
    group_id: str
    #: Kafka 4.3 starts a new group at epoch 1 (ModernGroup), so its first member's join
    #: moves it to 2; its assignment epoch starts at 0, so the group is assigned even
    #: when that join moves nothing.
    group_epoch: int = 1
    assignment_epoch: int = 0
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    #: instance id -> member id of a static member.
    static_members: dict[str, str] = field(default_factory=dict)
    targets: dict[str, Partitions] = field(default_factory=dict)
    #: (topic id, partition) -> epoch of the member that holds it until it revokes it.
    partition_epochs: dict[tuple[uuid.UUID, int], int] = field(default_factory=dict)
    #: regex -> topic names it matched at the last refresh.
    resolved_regexes: dict[str, frozenset[str]] = field(default_factory=dict)
    regex_refreshed_ms: int | None = None
    regex_topic_ids: frozenset[uuid.UUID] = frozenset()
    #: Subscribed topics' (name, id, partition count) when the epoch last moved.
    metadata: tuple[tuple[str, uuid.UUID, int], ...] = ()

    @property
    def state(self) -> ConsumerGroupState:
        """The first of `STATE_RULES` that holds (a consumer group's state is derived
        from its epochs and members, never stored)."""
        return next(state for state, holds in STATE_RULES if holds(self))

    def has_regex_subscribers(self, regex: str) -> bool:
        return any(m.subscribed_topic_regex == regex for m in self.members.values())

    def put_member(self, member: ConsumerMember) -> None:
        """Insert a member, or store one changed after `release`, holding its partitions."""
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        for topic, parts in (*member.assigned.items(), *member.pending_revocation.items()):
            for partition in parts:
                self.partition_epochs[(topic, partition)] = member.member_epoch

    def remove_member(self, member_id: str) -> ConsumerMember | None:
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        self.release(member)
        self.targets.pop(member_id, None)
        instance = member.instance_id
        if instance is not None and self.static_members.get(instance) == member_id:
            del self.static_members[instance]
        member.cancel_timers()
        return member

    def replace_static(self, static: ConsumerMember, member_id: str) -> ConsumerMember:
        """A static member's instance rejoining under a new member id takes over its
        assignment and target; the old member goes. The newcomer is not stored yet."""
        replacement = replace(
            static, member_id=member_id, member_epoch=0, previous_epoch=0,
            rebalance_timer=None, join_timer=None, sync_timer=None, session_deadline_ms=0,
        )  # fmt: skip
        target = self.targets.pop(static.member_id, None)
        self.remove_member(static.member_id)
        if target is not None:
            self.targets[member_id] = target
        return replacement

    def release(self, member: ConsumerMember) -> None:
        """Forget which partitions `member` holds, before its assignment changes."""
        for topic, parts in (*member.assigned.items(), *member.pending_revocation.items()):
            for partition in parts:
                if self.partition_epochs.get((topic, partition)) == member.member_epoch:
                    del self.partition_epochs[(topic, partition)]

    def classic_members(self) -> list[ConsumerMember]:
        return [m for m in self.members.values() if m.classic is not None]

    def supports_classic(self, protocol_type: str, names: Iterable[str]) -> bool:
        """Kafka's supportsClassicProtocols: a classic joiner must share a protocol with
        every classic member already in the group. Kafka counts each member's listing of
        a name (twice for ``["range", "range"]``) and wants a count equal to the number of
        classic members, so a member listing a name twice is refused when it rejoins
        alone (INCONSISTENT_GROUP_PROTOCOL, as on Kafka)."""
        offered = set(names)
        if protocol_type != "consumer" or not offered:
            return False
        classic = self.classic_members()
        counts = Counter(p.name for m in classic if m.classic for p in m.classic.protocols)
        return not classic or any(counts[name] == len(classic) for name in offered)

    def waiting_on_unreleased(self, member: ConsumerMember) -> bool:
        """Whether a partition of the member's target is still held by another member."""
        return member.state is MemberState.UNRELEASED_PARTITIONS and any(
            p not in member.assigned.get(topic, frozenset()) and (topic, p) in self.partition_epochs
            for topic, parts in self.targets.get(member.member_id, {}).items()
            for p in parts
        )

    def preferred_assignor(self, default: str) -> str:
        """The assignor most members name (Kafka's `computePreferredServerAssignor`)."""
        counts = Counter(m.server_assignor for m in self.members.values() if m.server_assignor)
        return max(counts, key=lambda name: counts[name]) if counts else default


def find_member(
    group: ConsumerGroup, member_id: str, instance_id: str | None, unknown_instance: str
) -> ConsumerMember:
    """The member a request names, by member id or (static members) instance id, with
    Kafka's refusals; `unknown_instance` is the caller's wording for an unknown instance."""
    if instance_id is None:
        member = group.members.get(member_id)
        if member is None:
            raise HeartbeatError(
                ErrorCode.unknown_member_id,
                f"Member {member_id} is not a member of group {group.group_id}.",
            )
        return member
    static_id = group.static_members.get(instance_id)
    static = group.members.get(static_id) if static_id is not None else None
    if static is None:
        raise HeartbeatError(ErrorCode.unknown_member_id, unknown_instance)
    if static.member_id != member_id:
        raise HeartbeatError(
            ErrorCode.fenced_instance_id,
            f"Static member {member_id} with instance id {instance_id} was fenced by member "
            f"{static.member_id}.",
        )
    return static


def owns_any(owned: Partitions | None, partitions: Mapping[uuid.UUID, Iterable[int]]) -> bool:
    """Whether the reported owned partitions still include any of `partitions`;
    unreported (None) means the member still owns everything."""
    if owned is None:
        return True
    return any(p in set(partitions.get(topic, ())) for topic, parts in owned.items() for p in parts)


def is_subset(owned: Partitions | None, assigned: Partitions) -> bool:
    if owned is None:
        return False
    return all(topic in assigned and parts <= assigned[topic] for topic, parts in owned.items())


def reconcile(
    member: ConsumerMember,
    target_epoch: int,
    target: Partitions,
    partition_epoch: Callable[[uuid.UUID, int], int | None],
    owned: Partitions | None,
) -> None:
    """Move `member` towards `target`, as Kafka's CurrentAssignmentBuilder: revoke
    first at the current epoch, then take the target epoch and the free partitions."""
    if member.state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            _next_assignment(
                member, member.member_epoch, target_epoch, target, partition_epoch, owned
            )
    elif member.state is MemberState.UNREVOKED_PARTITIONS:
        if not owns_any(owned, member.pending_revocation):
            epoch = member.member_epoch + 1
            _next_assignment(member, epoch, target_epoch, target, partition_epoch, owned)
    else:
        _next_assignment(member, member.member_epoch, target_epoch, target, partition_epoch, owned)


def _next_assignment(
    member: ConsumerMember,
    epoch: int,
    target_epoch: int,
    target: Partitions,
    partition_epoch: Callable[[uuid.UUID, int], int | None],
    owned: Partitions | None,
) -> None:
    assigned: dict[uuid.UUID, frozenset[int]] = {}
    revoking: dict[uuid.UUID, frozenset[int]] = {}
    pending: dict[uuid.UUID, frozenset[int]] = {}
    unreleased = False
    for topic in set(target) | set(member.assigned):
        wanted = target.get(topic, frozenset())
        current = member.assigned.get(topic, frozenset())
        kept = current & wanted
        to_assign = wanted - kept
        free = frozenset(p for p in to_assign if partition_epoch(topic, p) is None)
        unreleased = unreleased or free != to_assign
        for into, parts in ((assigned, kept), (revoking, current - kept), (pending, free)):
            if parts:
                into[topic] = parts
    if revoking and owns_any(owned, revoking):
        member.state = MemberState.UNREVOKED_PARTITIONS
        member.with_epoch(epoch)
        member.assigned, member.pending_revocation = assigned, revoking
        _keep_epochs(member, target_epoch)
        return
    for topic, parts in pending.items():
        assigned[topic] = assigned.get(topic, frozenset()) | parts
    member.state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    member.with_epoch(target_epoch)
    member.assigned, member.pending_revocation = assigned, {}
    _keep_epochs(member, target_epoch)


def _keep_epochs(member: ConsumerMember, new_epoch: int) -> None:
    """Each partition the member holds keeps the epoch it was assigned at; one it
    holds newly gets `new_epoch` (Kafka's CurrentAssignmentBuilder)."""
    before = member.assignment_epochs
    member.assignment_epochs = {
        (topic, partition): before.get((topic, partition), new_epoch)
        for held in (member.assigned, member.pending_revocation)
        for topic, parts in held.items()
        for partition in parts
    }


#: KIP-848 in one screen, as Kafka's ConsumerGroup.maybeUpdateGroupState decides it:
#: a group with no member is Empty; one whose epoch moved past the last assignment is
#: Assigning (the assignor must run); one whose members all reached that assignment
#: is Stable; otherwise members are still Reconciling (revoking, then taking
#: partitions: `reconcile`). Dead is only reported for a group that is gone.
STATE_RULES: tuple[tuple[ConsumerGroupState, Callable[[ConsumerGroup], bool]], ...] = (
    (ConsumerGroupState.EMPTY, lambda group: not group.members),
    (ConsumerGroupState.ASSIGNING, lambda group: group.group_epoch > group.assignment_epoch),
    (
        ConsumerGroupState.STABLE,
        lambda group: all(
            member.reconciled_to(group.assignment_epoch) for member in group.members.values()
        ),
    ),
    (ConsumerGroupState.RECONCILING, lambda group: True),
)
