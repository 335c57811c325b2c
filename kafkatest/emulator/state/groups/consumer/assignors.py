"""The server-side assignors of KIP-848 consumer groups: `uniform` and `range`.

They follow Kafka's group coordinator (`UniformHomogeneousAssignmentBuilder`,
`RangeAssignor`) so that the partitions each member ends up with are the ones a
real broker would give: members are the group's in join order, topics in name
order, partitions ascending. Kafka iterates hash maps instead, so which member of
an equal-sized split gets which partitions may differ; counts and stickiness agree.
Assignments are keyed by topic id, as the protocol carries them.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: topic id -> partitions of that topic.
Assignment = Mapping[uuid.UUID, frozenset[int]]

UNIFORM = "uniform"
RANGE = "range"
#: Kafka's group.consumer.assignors default; the first is used when no member names one.
ASSIGNORS = (UNIFORM, RANGE)


@dataclass(frozen=True)
class AssignorMember:
    member_id: str
    instance_id: str | None
    #: Ids of the existing topics the member subscribes to (names and regex together).
    topics: frozenset[uuid.UUID]
    #: The member's current target assignment, which `uniform` keeps where it can.
    target: Assignment


def assign(
    assignor: str,
    members: Sequence[AssignorMember],
    partition_counts: Mapping[uuid.UUID, int],
    topic_order: Sequence[uuid.UUID],
) -> dict[str, dict[uuid.UUID, frozenset[int]]]:
    """The new target assignment of every member (empty ones included)."""
    if not members:
        return {}
    if assignor == RANGE:
        return _range(members, partition_counts, topic_order)
    homogeneous = len({m.topics for m in members}) == 1
    if homogeneous:
        return _uniform_homogeneous(members, partition_counts, topic_order)
    return _uniform_heterogeneous(members, partition_counts, topic_order)


def _freeze(assignment: Mapping[uuid.UUID, set[int]]) -> dict[uuid.UUID, frozenset[int]]:
    return {topic: frozenset(parts) for topic, parts in assignment.items() if parts}


def _range(
    members: Sequence[AssignorMember],
    partition_counts: Mapping[uuid.UUID, int],
    topic_order: Sequence[uuid.UUID],
) -> dict[str, dict[uuid.UUID, frozenset[int]]]:
    """Consecutive ranges per topic; static members first by instance id, then by member id."""
    ordered = sorted(
        members,
        key=lambda m: (0, m.instance_id, "") if m.instance_id is not None else (1, "", m.member_id),
    )
    result: dict[str, dict[uuid.UUID, set[int]]] = {m.member_id: {} for m in members}
    for topic in topic_order:
        subscribers = [m for m in ordered if topic in m.topics]
        if not subscribers:
            continue
        count = partition_counts[topic]
        quota, extra = divmod(count, len(subscribers))
        start = 0
        for member in subscribers:
            size = quota + (1 if extra > 0 else 0)
            extra -= 1
            end = min(start + size, count)
            if start < end:
                result[member.member_id][topic] = set(range(start, end))
            start = end
    return {member_id: _freeze(a) for member_id, a in result.items()}


def _uniform_homogeneous(
    members: Sequence[AssignorMember],
    partition_counts: Mapping[uuid.UUID, int],
    topic_order: Sequence[uuid.UUID],
) -> dict[str, dict[uuid.UUID, frozenset[int]]]:
    """Every member may own every subscribed partition: keep what each has up to its
    quota (some get one extra), then hand out the rest in order."""
    subscribed = [t for t in topic_order if t in members[0].topics]
    held = {(t, p) for m in members for t, parts in m.target.items() for p in parts}
    unassigned = [
        (topic, p)
        for topic in subscribed
        for p in range(partition_counts[topic])
        if (topic, p) not in held
    ]
    total = sum(partition_counts[t] for t in subscribed)
    minimum, extra_left = divmod(total, len(members))
    result: dict[str, dict[uuid.UUID, set[int]]] = {}
    unfilled: list[tuple[str, int]] = []
    for index, member in enumerate(members):
        quota = minimum
        has_extra = extra_left > 0
        if has_extra:
            quota += 1
        kept: dict[uuid.UUID, set[int]] = {}
        for topic in sorted(member.target, key=_position(topic_order)):
            if topic not in subscribed:
                continue
            for partition in sorted(member.target[topic]):
                if partition >= partition_counts[topic]:
                    continue
                if quota > 0:
                    quota -= 1
                    kept.setdefault(topic, set()).add(partition)
                else:
                    unassigned.append((topic, partition))
        if quota > 0 and has_extra and len(members) - index > extra_left:
            quota -= 1
            has_extra = False
        if quota > 0:
            unfilled.append((member.member_id, quota))
        if has_extra:
            extra_left -= 1
        result[member.member_id] = kept
    cursor = 0
    for member_id, quota in unfilled:
        for topic, partition in unassigned[cursor : cursor + quota]:
            result[member_id].setdefault(topic, set()).add(partition)
        cursor += quota
    return {member_id: _freeze(a) for member_id, a in result.items()}


def _uniform_heterogeneous(
    members: Sequence[AssignorMember],
    partition_counts: Mapping[uuid.UUID, int],
    topic_order: Sequence[uuid.UUID],
) -> dict[str, dict[uuid.UUID, frozenset[int]]]:
    """Members subscribe to different topics: per topic, keep what subscribers own while
    that keeps the topic balanced among them, then give each free partition to the
    subscriber owning the fewest partitions overall (ties: join order)."""
    result: dict[str, dict[uuid.UUID, set[int]]] = {m.member_id: {} for m in members}
    totals = dict.fromkeys(result, 0)
    for topic in topic_order:
        subscribers = [m for m in members if topic in m.topics]
        if not subscribers:
            continue
        count = partition_counts[topic]
        ceiling = -(-count // len(subscribers))
        free = set(range(count))
        for member in subscribers:
            for partition in sorted(member.target.get(topic, ())):
                if partition in free and len(result[member.member_id].get(topic, ())) < ceiling:
                    result[member.member_id].setdefault(topic, set()).add(partition)
                    totals[member.member_id] += 1
                    free.discard(partition)
        for partition in sorted(free):
            chosen = min(
                subscribers,
                key=lambda m: (len(result[m.member_id].get(topic, ())), totals[m.member_id]),
            )
            result[chosen.member_id].setdefault(topic, set()).add(partition)
            totals[chosen.member_id] += 1
    return {member_id: _freeze(a) for member_id, a in result.items()}


def _position(topic_order: Sequence[uuid.UUID]):  # type: ignore[no-untyped-def]
    index = {topic: i for i, topic in enumerate(topic_order)}
    return lambda topic: index.get(topic, len(index))
