"""One classic group's membership and generation, and questions about them.

The coordinator (groups.py) performs the transitions and owns the timers; this
module only answers questions a transition needs (has everyone rejoined, which
protocol wins, what does the leader see), so each rule lives in one place.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from kio.schema.errors import ErrorCode

from kafkatest.emulator.protocol.consumer_protocol import subscribed_topics
from kafkatest.emulator.state.groups.classic.model import (
    TRANSITIONS,
    GroupDescription,
    GroupEvent,
    GroupState,
    JoinedMember,
    JoinResult,
    Member,
    MemberDescription,
    Protocol,
)
from kafkatest.emulator.state.groups.clock import TimerHandle
from kafkatest.emulator.state.groups.records import GroupMetadataRecord, MemberRecord


class NoCandidateProtocol(Exception):
    """A member offers none of the protocols counted as every member's.

    Kafka counts a protocol once per time a member lists it, and a candidate is one
    counted as often as there are members: a member listing one name twice (``["range",
    "range"]``) can make its only name no candidate. Kafka's vote then throws
    (IllegalArgumentException) and the operation choosing the protocol fails, leaving
    the group as it was; the emulator's callers do the same."""


@dataclass
class Group:
    group_id: str
    state: GroupState = GroupState.EMPTY
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    #: group_instance_id -> member_id of the current incarnation of a static member.
    static_members: dict[str, str] = field(default_factory=dict)
    #: Member ids handed out with MEMBER_ID_REQUIRED -> deadline to come back by.
    pending_members: dict[str, int] = field(default_factory=dict)
    #: Members of the current generation that have not sent SyncGroup yet.
    pending_sync: set[str] = field(default_factory=set)
    join_timer: TimerHandle | None = None
    sync_timer: TimerHandle | None = None
    #: Set while the first rebalance of an empty group waits for more joiners.
    initial_delay_active: bool = False
    #: When the latest new member was added (clock ms): a new group's short window
    #: stays open only while members are still arriving.
    last_member_added_ms: int = 0
    #: When the first rebalance of an empty group began (clock ms).
    window_opened_ms: int = 0

    def is_(self, *states: GroupState) -> bool:
        return self.state in states

    def on(self, event: GroupEvent) -> GroupState:
        """Move to the state `TRANSITIONS` gives for `event`; the new state."""
        following = TRANSITIONS[self.state].get(event)
        if following is None:
            raise AssertionError(
                f"classic group {self.group_id!r}: {event.value} is not a transition "
                f"out of {self.state.value} (classic/model.py:TRANSITIONS)"
            )
        self.state = following
        return following

    def metadata_record(self, now_ms: int) -> GroupMetadataRecord:
        """The group as Kafka's coordinator records it in __consumer_offsets."""
        members = tuple(
            MemberRecord(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                rebalance_timeout_ms=m.rebalance_timeout_ms,
                session_timeout_ms=m.session_timeout_ms,
                subscription=m.metadata_for(self.protocol_name),
                assignment=m.assignment,
            )
            for m in self.members.values()
        )
        return GroupMetadataRecord(
            protocol_type=self.protocol_type or "",
            generation=self.generation_id,
            protocol=self.protocol_name,
            leader=self.leader_id,
            state_timestamp_ms=now_ms,
            members=members,
        )

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def is_static_fenced(self, member_id: str, group_instance_id: str | None) -> bool:
        """A newer incarnation of this static member has taken over its instance id."""
        if group_instance_id is None:
            return False
        current = self.static_members.get(group_instance_id)
        return current is not None and current != member_id

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def all_members_rejoined(self) -> bool:
        return not self.pending_members and all(m.awaiting_join for m in self.members.values())

    def candidate_protocols(self, members: Mapping[str, Member] | None = None) -> set[str]:
        """Protocols every current member (or every one of `members`) supports: as
        Kafka counts them, once per listing, so a name one member lists twice may be
        no candidate."""
        members = self.members if members is None else members
        counts = Counter(p.name for m in members.values() for p in m.protocols)
        return {name for name, count in counts.items() if count == len(members)}

    def supports(self, protocol_type: str, protocols: tuple[Protocol, ...]) -> bool:
        if not protocol_type or not protocols:
            return False
        if not self.members:
            return True
        offered = {p.name for p in protocols}
        return protocol_type == self.protocol_type and bool(offered & self.candidate_protocols())

    def select_protocol(self, members: Mapping[str, Member] | None = None) -> str:
        """Each member (of `members`, default all) votes for its most preferred
        candidate; most votes wins.

        Raises NoCandidateProtocol where Kafka's vote throws."""
        members = self.members if members is None else members
        candidates = self.candidate_protocols(members)
        votes: Counter[str] = Counter()
        for member in members.values():
            vote = next((p.name for p in member.protocols if p.name in candidates), None)
            if vote is None:
                raise NoCandidateProtocol(
                    f"member {member.member_id} supports none of the candidate protocols"
                )
            votes[vote] += 1
        return max(sorted(votes), key=lambda name: votes[name])

    def join_result_for(self, member_id: str, skip_assignment: bool = False) -> JoinResult:
        """The current generation as a member sees it in its JoinGroup response."""
        members: tuple[JoinedMember, ...] = ()
        if self.is_leader(member_id):
            members = tuple(
                JoinedMember(m.member_id, m.group_instance_id, m.metadata_for(self.protocol_name))
                for m in self.members.values()
            )
        return JoinResult(
            error=ErrorCode.none,
            member_id=member_id,
            generation_id=self.generation_id,
            protocol_type=self.protocol_type,
            protocol_name=self.protocol_name,
            leader_id=self.leader_id or "",
            members=members,
            skip_assignment=skip_assignment,
        )

    def subscribed_topics(self) -> frozenset[str]:
        """Topics the members' consumer-protocol metadata subscribes to.

        As in Kafka, one member's unreadable metadata makes it "no topics at all".
        """
        topics: set[str] = set()
        for member in self.members.values():
            subscription = subscribed_topics(member.metadata_for(self.protocol_name))
            if subscription is None:
                return frozenset()
            topics |= subscription
        return frozenset(topics)

    def describe(self) -> GroupDescription:
        """Metadata is shown once Stable; assignments always (a rebalancing group shows
        the last ones, until a rebalance interrupts the handing out of new ones)."""
        stable = self.is_(GroupState.STABLE)
        members = tuple(
            MemberDescription(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                metadata=m.metadata_for(self.protocol_name) if stable else b"",
                assignment=m.assignment,
            )
            for m in self.members.values()
        )
        return GroupDescription(
            error=ErrorCode.none,
            group_id=self.group_id,
            state=self.state,
            protocol_type=self.protocol_type or "",
            protocol_name=(self.protocol_name or "") if stable else "",
            members=members,
        )
