"""ConsumerGroupHeartbeat and ConsumerGroupDescribe over a bare socket, on every backend.

Clients hide the protocol's steps; these tests take them one at a time, as a
member would, and expect real Kafka 4.1's answers (run with
``--kafka-backend=emulator,kafka``): member epochs, partitions revoked from one
member before another gets them, fencing of stale epochs, OffsetCommit checked
against the member epoch, and the answers where a classic and a consumer group
meet under one id. Both backends run with 500 ms heartbeats (kafkatest's test
settings), which is the interval the broker tells members.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from group_wire import (
    COMMIT,
    DELETE_GROUPS,
    DESCRIBE,
    DESCRIBE_GROUPS,
    FETCH,
    JOIN,
    LIST_GROUPS,
    OFFSET_DELETE,
    SYNC,
    Session,
    assignable,
    assigned,
    commit_offset,
    millis,
    new_member,
    ready_session,
    topic_id,
)
from kio.index import load_payload_module
from kio.schema.errors import ErrorCode
from kio.static.constants import EntityType

from kafkatest import Broker
from kafkatest.brokers.emulator import EmulatorBroker

pytestmark = pytest.mark.kafka_min_version(
    "4.0", "KIP-848 consumer groups are generally available from Kafka 4.0 (off in 3.9)"
)


@pytest.fixture
def group() -> str:
    return f"kip848-wire-{uuid.uuid4().hex[:8]}"


#: The member epoch a new group's first join gives: Kafka 4.3 starts a consumer group
#: at epoch 1 and the join moves it on (4.1 started at 0); each later move adds one.
E0 = 2


@pytest.fixture
def session(kafka_broker: Broker, group: str) -> Iterator[Session]:
    opened = ready_session(kafka_broker, group)
    yield opened
    opened.close()


def test_join_gets_every_partition_at_the_group_epoch(
    kafka_broker: Broker, kafka_topic, session: Session, group: str
) -> None:
    topic = kafka_topic(partitions=2)
    tid = topic_id(session, topic)
    member = new_member()
    joined = session.heartbeat(group, member, 0, subscribed_topic_names=(topic,))
    assert (joined.error_code, joined.member_id, joined.member_epoch) == (
        ErrorCode.none,
        member,
        E0,
    )
    assert joined.heartbeat_interval.total_seconds() == 0.5
    assert assigned(joined) == {tid: [0, 1]}
    # Nothing changed: the assignment is left out (null means "as before").
    again = session.heartbeat(group, member, E0)
    assert (again.error_code, again.member_epoch, again.assignment) == (ErrorCode.none, E0, None)


def test_partitions_are_revoked_before_another_member_gets_them(
    kafka_broker: Broker, kafka_topic, session: Session, group: str
) -> None:
    topic = kafka_topic(partitions=2)
    tid = topic_id(session, topic)
    a, b = new_member(), new_member()
    assert assigned(session.heartbeat(group, a, 0, subscribed_topic_names=(topic,))) == {
        tid: [0, 1]
    }
    # b joins at the next group epoch, but both partitions are still a's: it gets nothing yet.
    joined_b = session.heartbeat(group, b, 0, subscribed_topic_names=(topic,))
    assert (joined_b.member_epoch, assigned(joined_b)) == (E0 + 1, {})
    # a keeps its epoch while it must give partition 1 up.
    revoking = session.heartbeat(group, a, E0, owned={tid: [0, 1]})
    assert (revoking.member_epoch, assigned(revoking)) == (E0, {tid: [0]})
    still_owned = session.heartbeat(group, b, E0 + 1)
    assert (still_owned.member_epoch, still_owned.assignment) == (E0 + 1, None)
    # Once a reports partition 1 gone, it moves to the new epoch and b may have it.
    released = session.heartbeat(group, a, E0, owned={tid: [0]})
    assert (released.member_epoch, released.assignment) == (E0 + 1, None)
    granted = session.heartbeat(group, b, E0 + 1)
    assert (granted.member_epoch, assigned(granted)) == (E0 + 1, {tid: [1]})

    described = session.call(DESCRIBE, 1, group_ids=(group,), include_authorized_operations=False)
    (info,) = described.groups
    assert (info.error_code, info.group_state, info.group_epoch, info.assignment_epoch) == (
        ErrorCode.none,
        "Stable",
        E0 + 1,
        E0 + 1,
    )
    assert info.assignor_name == "uniform"
    members = {m.member_id: m for m in info.members}
    assert {
        m: [tp.partitions for tp in members[m].assignment.topic_partitions] for m in (a, b)
    } == {
        a: [(0,)],
        b: [(1,)],
    }
    assert [tp.topic_name for tp in members[b].target_assignment.topic_partitions] == [topic]
    assert (members[a].member_type, members[a].subscribed_topic_names) == (1, (topic,))


def test_stale_epochs_are_fenced_and_offset_commits_checked_against_the_member_epoch(
    kafka_broker: Broker, kafka_topic, session: Session, group: str
) -> None:
    topic = kafka_topic(partitions=1)
    assignable(session, topic)
    a, b = new_member(), new_member()
    session.heartbeat(group, a, 0, subscribed_topic_names=(topic,))
    ahead = session.heartbeat(group, a, 5)
    assert ahead.error_code == ErrorCode.fenced_member_epoch
    assert ahead.error_message == (
        "The consumer group member has a greater member epoch (5) than the one known by the "
        f"group coordinator ({E0}). The member must abandon all its partitions and rejoin."
    )
    assert (ahead.member_id, ahead.member_epoch) == (None, 0)
    unknown = session.heartbeat(group, new_member(), 1)
    assert unknown.error_code == ErrorCode.unknown_member_id
    session.heartbeat(group, b, 0, subscribed_topic_names=(topic,))  # group epoch E0 + 1
    session.heartbeat(group, a, E0, owned={})  # a has nothing to revoke: epoch E0 + 1

    def commit(member: str, epoch: int, group_id: str = group) -> ErrorCode:
        return commit_offset(session, group_id, topic, member, epoch)

    # An older epoch commits the partitions assigned to the member at or before it
    # (Kafka 4.3): partition 0 has been a's since E0.
    assert commit(a, E0) == ErrorCode.none
    assert commit(a, E0 - 1) == ErrorCode.stale_member_epoch
    assert commit(a, E0 + 2) == ErrorCode.stale_member_epoch  # newer than a's
    assert commit(a, E0 + 1) == ErrorCode.none
    assert commit("not-a-member", E0 + 1) == ErrorCode.unknown_member_id
    assert commit("", -1) == ErrorCode.unknown_member_id  # the group has members
    # v9 names a group that does not exist (older versions said ILLEGAL_GENERATION).
    absent = session.sibling(f"{group}-absent")
    assert commit(a, E0 + 1, absent) == ErrorCode.group_id_not_found

    def fetch(member: str | None, epoch: int) -> tuple[ErrorCode, list[int]]:
        types = load_payload_module(FETCH, 9, EntityType.request)
        wanted = types.OffsetFetchRequestTopics(name=topic, partition_indexes=(0,))
        request = types.OffsetFetchRequestGroup(
            group_id=group, member_id=member, member_epoch=epoch, topics=(wanted,)
        )
        (answer,) = session.call(FETCH, 9, groups=(request,), require_stable=False).groups
        offsets = [p.committed_offset for t in answer.topics for p in t.partitions]
        return answer.error_code, offsets

    assert fetch(a, E0 + 1) == (ErrorCode.none, [0])
    assert fetch(None, -1) == (ErrorCode.none, [0])  # admin clients name no member
    assert fetch(a, E0) == (ErrorCode.stale_member_epoch, [])
    assert fetch("not-a-member", E0 + 1) == (ErrorCode.unknown_member_id, [])


def test_bad_heartbeats_get_kafkas_errors(
    kafka_broker: Broker, kafka_topic, session: Session, group: str
) -> None:
    topic = kafka_topic(partitions=1)

    def refused(response: Any) -> tuple[ErrorCode, str]:
        return response.error_code, response.error_message

    assert refused(session.heartbeat(group, "", 0, subscribed_topic_names=(topic,))) == (
        ErrorCode.invalid_request,
        "MemberId can't be empty.",
    )
    no_subscription = session.heartbeat(group, new_member(), 0)
    assert refused(no_subscription) == (
        ErrorCode.invalid_request,
        "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.",
    )
    assert refused(
        session.heartbeat(
            group, new_member(), 0, subscribed_topic_names=(topic,), server_assignor="sticky"
        )
    ) == (
        ErrorCode.unsupported_assignor,
        "ServerAssignor sticky is not supported. Supported assignors: uniform, range.",
    )
    bad_regex = session.heartbeat(group, new_member(), 0, subscribed_topic_regex="(?<=x)y")
    assert bad_regex.error_code == ErrorCode.invalid_regular_expression
    # RE2J reads "(?<" as a named group (and has no look-behind).
    assert bad_regex.error_message == (
        "SubscribedTopicRegex `(?<=x)y` is not a valid regular expression: invalid named capture."
    )
    unclosed = session.heartbeat(group, new_member(), 0, subscribed_topic_regex="orders-[a-z")
    assert refused(unclosed) == (
        ErrorCode.invalid_regular_expression,
        "SubscribedTopicRegex `orders-[a-z` is not a valid regular expression: missing closing ].",
    )
    absent = session.sibling(f"{group}-absent")
    unknown_group = session.heartbeat(absent, new_member(), 3)
    assert refused(unknown_group) == (
        ErrorCode.group_id_not_found,
        f"Consumer group {absent} not found.",
    )
    described = session.call(DESCRIBE, 1, group_ids=(absent,), include_authorized_operations=False)
    assert refused(described.groups[0]) == (
        ErrorCode.group_id_not_found,
        f"Group {absent} not found.",
    )


def test_a_member_that_leaves_hands_its_partitions_on(
    kafka_broker: Broker, kafka_topic, session: Session, group: str
) -> None:
    topic = kafka_topic(partitions=2)
    tid = topic_id(session, topic)
    # `range` gives members ranges in member id order: a gets partition 0, b partition 1.
    a, b = sorted((new_member(), new_member()))
    session.heartbeat(group, a, 0, subscribed_topic_names=(topic,), server_assignor="range")
    session.heartbeat(group, b, 0, subscribed_topic_names=(topic,), server_assignor="range")
    session.heartbeat(group, a, E0, owned={tid: [0, 1]})
    a_epoch = session.heartbeat(group, a, E0, owned={tid: [0]}).member_epoch
    assert assigned(session.heartbeat(group, b, E0 + 1)) == {tid: [1]}
    left = session.heartbeat(group, a, -1)
    assert (left.error_code, left.member_id, left.member_epoch) == (ErrorCode.none, a, -1)
    took_over = session.heartbeat(group, b, a_epoch)
    assert (took_over.member_epoch, assigned(took_over)) == (E0 + 2, {tid: [0, 1]})
    gone = session.heartbeat(group, a, a_epoch)
    assert gone.error_code == ErrorCode.unknown_member_id


def test_one_id_is_one_group_type(
    kafka_broker: Broker, kafka_topic, session: Session, group: str
) -> None:
    """A consumer group refuses a classic JoinGroup of another protocol type; DescribeGroups
    (classic only) does not know it; ListGroups v5 names its type."""
    topic = kafka_topic(partitions=1)
    assignable(session, topic)
    session.heartbeat(group, new_member(), 0, subscribed_topic_names=(topic,))
    join_types = load_payload_module(JOIN, 5, EntityType.request)
    joined = session.call(
        JOIN,
        5,
        group_id=group,
        session_timeout=millis(10_000),
        rebalance_timeout=millis(10_000),
        member_id="",
        group_instance_id=None,
        protocol_type="connect",
        protocols=(join_types.JoinGroupRequestProtocol(name="default", metadata=b""),),
    )
    assert joined.error_code == ErrorCode.inconsistent_group_protocol
    described = session.call(
        DESCRIBE_GROUPS, 5, groups=(group,), include_authorized_operations=False
    ).groups[0]
    assert (described.error_code, described.group_state) == (ErrorCode.none, "Dead")
    listed = session.call(LIST_GROUPS, 5, states_filter=(), types_filter=("consumer",)).groups
    assert [
        (g.group_type, g.protocol_type, g.group_state) for g in listed if g.group_id == group
    ] == [("consumer", "consumer", "Stable")]
    classic_only = session.call(LIST_GROUPS, 5, states_filter=(), types_filter=("classic",))
    assert group not in {g.group_id for g in classic_only.groups}


def test_describe_groups_v6_says_a_consumer_group_is_not_classic(
    kafka_broker: Broker, kafka_topic, session: Session, group: str
) -> None:
    topic = kafka_topic(partitions=1)
    session.heartbeat(group, new_member(), 0, subscribed_topic_names=(topic,))
    described = session.call(
        DESCRIBE_GROUPS, 6, groups=(group,), include_authorized_operations=False
    ).groups[0]
    assert (described.error_code, described.error_message, described.group_state) == (
        ErrorCode.group_id_not_found,
        f"Group {group} is not a classic group.",
        "Dead",
    )


def test_a_static_member_comes_back_to_its_partitions(
    kafka_broker: Broker, kafka_topic, session: Session, group: str
) -> None:
    topic = kafka_topic(partitions=2)
    tid = topic_id(session, topic)
    first, other = new_member(), new_member()
    names = {"subscribed_topic_names": (topic,)}
    session.heartbeat(group, first, 0, instance_id="instance-a", **names)
    session.heartbeat(group, other, 0, instance_id="instance-b", **names)
    session.heartbeat(group, first, E0, owned={tid: [0, 1]}, instance_id="instance-a")
    session.heartbeat(group, first, E0, owned={tid: [0]}, instance_id="instance-a")
    assert assigned(session.heartbeat(group, other, E0 + 1, instance_id="instance-b")) == {tid: [1]}

    taken = session.heartbeat(group, new_member(), 0, instance_id="instance-a", **names)
    assert taken.error_code == ErrorCode.unreleased_instance_id
    assert taken.error_message.endswith(
        f"with instance id instance-a cannot join the group because the instance id is "
        f"owned by {first} member."
    )
    paused = session.heartbeat(group, first, -2, instance_id="instance-a")
    assert (paused.error_code, paused.member_epoch) == (ErrorCode.none, -2)
    restarted = new_member()
    back = session.heartbeat(group, restarted, 0, instance_id="instance-a", **names)
    assert (back.error_code, back.member_epoch, assigned(back)) == (
        ErrorCode.none,
        E0 + 1,
        {tid: [0]},
    )
    fenced = session.heartbeat(group, first, E0 + 1, instance_id="instance-a")
    assert fenced.error_code == ErrorCode.fenced_instance_id
    # The group epoch did not move: the seat was kept, not given up.
    (info,) = session.call(
        DESCRIBE, 1, group_ids=(group,), include_authorized_operations=False
    ).groups
    assert (info.group_epoch, sorted(m.instance_id for m in info.members)) == (
        E0 + 1,
        ["instance-a", "instance-b"],
    )


def test_a_silent_member_is_fenced_when_its_session_ends(
    kafka_broker: Broker, kafka_topic, session: Session, group: str
) -> None:
    """10 s sessions on both backends (kafkatest's test settings): the survivor keeps
    heartbeating and is given the silent member's partition once its session ends."""
    topic = kafka_topic(partitions=2)
    tid = topic_id(session, topic)
    silent, survivor = new_member(), new_member()
    session.heartbeat(group, silent, 0, subscribed_topic_names=(topic,))
    session.heartbeat(group, survivor, 0, subscribed_topic_names=(topic,))
    session.heartbeat(group, silent, E0, owned={tid: [0, 1]})
    session.heartbeat(group, silent, E0, owned={tid: [0]})
    epoch = E0 + 1
    owned: dict[uuid.UUID, list[int]] = {}
    deadline = time.monotonic() + 60
    while owned != {tid: [0, 1]}:
        assert time.monotonic() < deadline, owned
        response = session.heartbeat(group, survivor, epoch, owned=owned)
        assert response.error_code == ErrorCode.none, response
        epoch = response.member_epoch
        owned = assigned(response) or owned
        time.sleep(0.5)
    assert epoch == E0 + 2
    gone = session.heartbeat(group, silent, E0 + 1)
    assert gone.error_code == ErrorCode.unknown_member_id


def test_a_live_classic_group_of_another_protocol_type_is_not_taken_over(
    kafka_broker: Broker, kafka_topic, session: Session, group: str
) -> None:
    topic = kafka_topic(partitions=1)
    join_types = load_payload_module(JOIN, 5, EntityType.request)
    fields: dict[str, Any] = {
        "group_id": group,
        "session_timeout": millis(30_000),
        "rebalance_timeout": millis(30_000),
        "group_instance_id": None,
        "protocol_type": "connect",
        "protocols": (join_types.JoinGroupRequestProtocol(name="default", metadata=b""),),
    }
    first = session.call(JOIN, 5, member_id="", **fields)
    assert first.error_code == ErrorCode.member_id_required
    joined = session.call(JOIN, 5, member_id=first.member_id, **fields)
    assert joined.error_code == ErrorCode.none
    # The leader's SyncGroup stores the group. Before it, Kafka's coordinator holds the
    # group only in uncommitted state, and ConsumerGroupDescribe (which reads committed
    # state) answers "not found" or "not a consumer group" depending on whether any
    # other group's write has committed since: racy under a shared coordinator.
    sync_types = load_payload_module(SYNC, 5, EntityType.request)
    synced = session.call(
        SYNC,
        5,
        group_id=group,
        generation_id=joined.generation_id,
        member_id=first.member_id,
        group_instance_id=None,
        protocol_type="connect",
        protocol_name="default",
        assignments=(
            sync_types.SyncGroupRequestAssignment(member_id=first.member_id, assignment=b""),
        ),
    )
    assert synced.error_code == ErrorCode.none

    refused = session.heartbeat(group, new_member(), 0, subscribed_topic_names=(topic,))
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.group_id_not_found,
        f"Cannot upgrade classic group {group} to consumer group because the group does not "
        "use the consumer embedded protocol.",
    )
    described = session.call(
        DESCRIBE, 1, group_ids=(group,), include_authorized_operations=False
    ).groups[0]
    assert (described.error_code, described.error_message) == (
        ErrorCode.group_id_not_found,
        f"Group {group} is not a consumer group.",
    )


def test_sessions_run_on_the_emulators_clock() -> None:
    """advance_clock expires a member at once, as ten silent seconds would."""
    with EmulatorBroker() as broker:
        broker.create_topic("clocked", 1)
        group = f"kip848-clock-{uuid.uuid4().hex[:8]}"
        session = Session(broker.bootstrap_servers)
        try:
            member = new_member()
            session.heartbeat(group, member, 0, subscribed_topic_names=("clocked",))
            broker.advance_clock(10_001)

            def members() -> int:
                described = session.call(
                    DESCRIBE, 1, group_ids=(group,), include_authorized_operations=False
                )
                return len(described.groups[0].members)

            # Well inside the 10 s session: only the advanced clock can have ended it.
            deadline = time.monotonic() + 5
            while members():
                assert time.monotonic() < deadline, "the member outlived its session"
                time.sleep(0.05)
            assert session.heartbeat(group, member, 1).error_code == ErrorCode.unknown_member_id
        finally:
            session.close()


def test_a_consumer_group_keeps_what_it_reads_until_it_is_empty(
    kafka_broker: Broker, kafka_topic, session: Session, group: str
) -> None:
    """OffsetDelete refuses a subscribed topic; DeleteGroups refuses a group with members."""
    topic = kafka_topic(partitions=1)
    assignable(session, topic)
    member = new_member()
    epoch = session.heartbeat(group, member, 0, subscribed_topic_names=(topic,)).member_epoch
    assert commit_offset(session, group, topic, member, epoch) == ErrorCode.none
    delete_types = load_payload_module(OFFSET_DELETE, 0, EntityType.request)
    wanted = delete_types.OffsetDeleteRequestTopic(
        name=topic, partitions=(delete_types.OffsetDeleteRequestPartition(partition_index=0),)
    )
    kept = session.call(OFFSET_DELETE, 0, group_id=group, topics=(wanted,))
    assert (kept.error_code, kept.topics[0].partitions[0].error_code) == (
        ErrorCode.none,
        ErrorCode.group_subscribed_to_topic,
    )

    def delete_group() -> ErrorCode:
        (result,) = session.call(DELETE_GROUPS, 2, groups_names=(group,)).results
        return ErrorCode(result.error_code)

    assert delete_group() == ErrorCode.non_empty_group
    session.heartbeat(group, member, -1)
    assert delete_group() == ErrorCode.none
    gone = session.call(DESCRIBE, 1, group_ids=(group,), include_authorized_operations=False)
    assert gone.groups[0].error_code == ErrorCode.group_id_not_found


def test_delete_groups_answers_a_group_named_twice_once(
    kafka_broker: Broker, kafka_topic, session: Session, group: str
) -> None:
    """Kafka drops repeated names before deleting: one result per group (in no set
    order: Kafka answers by coordinator partition)."""
    topic = kafka_topic(partitions=1)
    assignable(session, topic)
    member = new_member()
    session.heartbeat(group, member, 0, subscribed_topic_names=(topic,))
    session.heartbeat(group, member, -1)  # an empty consumer group
    classic = session.sibling(f"{group}-classic")  # an empty classic group, by a commit
    commit = load_payload_module(COMMIT, 2, EntityType.request)
    committed = session.call(
        COMMIT,
        2,
        group_id=classic,
        generation_id_or_member_epoch=-1,
        member_id="",
        retention_time=millis(-1),
        topics=(
            commit.OffsetCommitRequestTopic(
                name=topic,
                partitions=(
                    commit.OffsetCommitRequestPartition(
                        partition_index=0, committed_offset=0, committed_metadata=""
                    ),
                ),
            ),
        ),
    )
    assert committed.topics[0].partitions[0].error_code == ErrorCode.none
    missing = session.sibling(f"{group}-missing")

    def delete(*names: str) -> list[tuple[str, ErrorCode]]:
        results = session.call(DELETE_GROUPS, 2, groups_names=names).results
        return sorted((r.group_id, ErrorCode(r.error_code)) for r in results)

    assert delete(group, group) == [(group, ErrorCode.none)]
    assert delete(classic, missing, classic, missing) == sorted(
        [(classic, ErrorCode.none), (missing, ErrorCode.group_id_not_found)]
    )
    assert delete(group, group) == [(group, ErrorCode.group_id_not_found)]
