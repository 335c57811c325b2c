"""The nouns of the classic consumer group protocol, free of any wire format.

Error outcomes use Kafka's own error codes (kio's `ErrorCode`) because they are
the protocol's vocabulary: handlers pass them through unchanged, and tests can
assert on the exact error a real broker would give.
"""

from __future__ import annotations

import asyncio
import enum
from dataclasses import dataclass, field
from typing import Any

from kio.schema.errors import ErrorCode

#: What a client sends as member id before the coordinator has given it one.
UNKNOWN_MEMBER_ID = ""
#: Generation of commits from consumers outside group management (assign()).
NO_GENERATION = -1


class GroupState(str, enum.Enum):
    """Values are the names Kafka reports in DescribeGroups and ListGroups."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


class GroupEvent(enum.Enum):
    """What moves a classic group from one state to another."""

    #: A member joins, leaves or changes its protocols: everyone must rejoin.
    REBALANCE = "rebalance"
    #: The join phase ends with members: the leader is to send the assignment.
    JOINED = "joined"
    #: The join phase ends with nobody left.
    EMPTIED = "emptied"
    #: The leader's SyncGroup installs the assignment.
    ASSIGNED = "assigned"
    #: DeleteGroups (or the group's expiry) removes it.
    DELETED = "deleted"


_E, _P, _C, _S, _D = (
    GroupState.EMPTY,
    GroupState.PREPARING_REBALANCE,
    GroupState.COMPLETING_REBALANCE,
    GroupState.STABLE,
    GroupState.DEAD,
)
_REBALANCE, _JOINED, _EMPTIED, _ASSIGNED, _DELETED = GroupEvent

#: The classic protocol in one screen: state -> event -> next state (Kafka's
#: ClassicGroupState and its valid previous states). `Group.on` follows it; an event a
#: state does not list is a coordinator bug, refused rather than silently applied.
TRANSITIONS: dict[GroupState, dict[GroupEvent, GroupState]] = {
    _E: {_REBALANCE: _P, _DELETED: _D},
    _P: {_REBALANCE: _P, _JOINED: _C, _EMPTIED: _E, _DELETED: _D},
    _C: {_REBALANCE: _P, _ASSIGNED: _S, _DELETED: _D},
    _S: {_REBALANCE: _P, _DELETED: _D},
    _D: {_DELETED: _D},
}


@dataclass(frozen=True)
class Protocol:
    """One assignment strategy a member supports, with its subscription metadata."""

    name: str
    metadata: bytes


@dataclass(frozen=True)
class JoinRequest:
    group_id: str
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: tuple[Protocol, ...]
    #: JoinGroup v4+: a member without an id must first fetch one (MEMBER_ID_REQUIRED).
    require_known_member_id: bool = True


@dataclass(frozen=True)
class JoinedMember:
    """What the leader learns about each member so that it can run the assignor."""

    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass(frozen=True)
class JoinResult:
    error: ErrorCode
    member_id: str
    generation_id: int = NO_GENERATION
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str = ""
    #: Filled for the leader only; followers get an empty tuple.
    members: tuple[JoinedMember, ...] = ()
    #: A replaced static leader must not reassign (JoinGroup v9+).
    skip_assignment: bool = False


@dataclass(frozen=True)
class SyncResult:
    error: ErrorCode
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol_name: str | None = None


@dataclass(frozen=True)
class LeavingMember:
    member_id: str
    group_instance_id: str | None = None


@dataclass(frozen=True)
class LeaveResult:
    error: ErrorCode
    #: One entry per leaving member, in request order.
    member_errors: tuple[tuple[LeavingMember, ErrorCode], ...] = ()


@dataclass(frozen=True)
class MemberDescription:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True)
class GroupDescription:
    error: ErrorCode
    group_id: str
    state: GroupState
    protocol_type: str
    protocol_name: str
    members: tuple[MemberDescription, ...] = ()


@dataclass(frozen=True)
class GroupListing:
    group_id: str
    protocol_type: str
    state: GroupState


@dataclass
class Member:
    """A member as the coordinator tracks it across generations."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: tuple[Protocol, ...]
    heartbeat_deadline_ms: int
    assignment: bytes = b""
    join_waiters: list[asyncio.Future[JoinResult]] = field(default_factory=list)
    sync_waiters: list[asyncio.Future[SyncResult]] = field(default_factory=list)

    @property
    def awaiting_join(self) -> bool:
        return bool(self.join_waiters)

    @property
    def awaiting_sync(self) -> bool:
        return bool(self.sync_waiters)

    def answer_join(self, result: JoinResult) -> None:
        waiters, self.join_waiters = self.join_waiters, []
        _answer(waiters, result)

    def answer_sync(self, result: SyncResult) -> None:
        waiters, self.sync_waiters = self.sync_waiters, []
        _answer(waiters, result)

    def metadata_for(self, protocol_name: str | None) -> bytes:
        return next((p.metadata for p in self.protocols if p.name == protocol_name), b"")


def _answer(waiters: list[asyncio.Future[Any]], result: object) -> None:
    """Skips waiters whose loop is gone (a broker restarted on a new loop)."""
    for waiter in waiters:
        if not waiter.done() and not waiter.get_loop().is_closed():
            waiter.set_result(result)
