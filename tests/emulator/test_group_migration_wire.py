"""Online migration between classic and consumer groups over a bare socket, on every backend.

Kafka 4.1 (`group.consumer.migration.policy=bidirectional`, its default) upgrades a
live classic group of consumers when a ConsumerGroupHeartbeat joins it, keeps its
classic members speaking JoinGroup/SyncGroup/Heartbeat inside the consumer group
with assignments made by the broker, and turns the group classic again when the
last consumer-protocol member leaves. These tests take each step as a member would
and expect Kafka's answers (run with ``--kafka-backend=emulator,kafka``).
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from group_wire import (
    CLASSIC_HEARTBEAT,
    DESCRIBE,
    DESCRIBE_GROUPS,
    JOIN,
    LEAVE,
    LIST_GROUPS,
    SYNC,
    Session,
    assigned,
    assigned_partitions,
    assignment,
    commit_offset,
    millis,
    new_member,
    ready_session,
    subscription,
    topic_id,
)
from kio.index import load_payload_module
from kio.schema.errors import ErrorCode
from kio.static.constants import EntityType

from kafkatest import Broker

pytestmark = pytest.mark.kafka_min_version(
    "4.0", "KIP-848 consumer groups and their migration arrive with Kafka 4.0"
)


class ClassicMember:
    """A classic consumer speaking JoinGroup v9 / SyncGroup v5 / Heartbeat v4 to `group`."""

    def __init__(self, session: Session, group: str, topic: str) -> None:
        self.session, self.group, self.topic = session, group, topic
        self.member_id = ""
        self.generation = -1
        #: The assignors it offers, in its order of preference.
        self.protocol_names: tuple[str, ...] = ("range",)

    def join(self, owned: dict[str, list[int]] | None = None) -> Any:
        types = load_payload_module(JOIN, 9, EntityType.request)
        response = self.session.call(
            JOIN,
            9,
            group_id=self.group,
            session_timeout=millis(30_000),
            rebalance_timeout=millis(30_000),
            member_id=self.member_id,
            group_instance_id=None,
            protocol_type="consumer",
            protocols=tuple(
                types.JoinGroupRequestProtocol(
                    name=name, metadata=subscription([self.topic], owned)
                )
                for name in self.protocol_names
            ),
            reason=None,
        )
        if response.error_code == ErrorCode.member_id_required:
            self.member_id = response.member_id
            return self.join(owned)
        self.generation = response.generation_id
        return response

    def sync(
        self,
        gives: dict[str, dict[str, list[int]]] | None = None,
        protocol_name: str = "range",
        user_data: bytes | None = None,
    ) -> Any:
        types = load_payload_module(SYNC, 5, EntityType.request)
        return self.session.call(
            SYNC,
            5,
            group_id=self.group,
            generation_id=self.generation,
            member_id=self.member_id,
            group_instance_id=None,
            protocol_type="consumer",
            protocol_name=protocol_name,
            assignments=tuple(
                types.SyncGroupRequestAssignment(
                    member_id=member, assignment=assignment(parts, user_data)
                )
                for member, parts in (gives or {}).items()
            ),
        )

    def heartbeat(self, generation: int | None = None) -> ErrorCode:
        response = self.session.call(
            CLASSIC_HEARTBEAT,
            4,
            group_id=self.group,
            generation_id=self.generation if generation is None else generation,
            member_id=self.member_id,
            group_instance_id=None,
        )
        error: ErrorCode = response.error_code
        return error

    def leave(self) -> Any:
        types = load_payload_module(LEAVE, 5, EntityType.request)
        return self.session.call(
            LEAVE,
            5,
            group_id=self.group,
            members=(
                types.MemberIdentity(member_id=self.member_id, group_instance_id=None, reason=None),
            ),
        )


@pytest.fixture
def group() -> str:
    return f"migration-wire-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def session(kafka_broker: Broker, group: str) -> Iterator[Session]:
    opened = ready_session(kafka_broker, group)
    yield opened
    opened.close()


def describe(session: Session, group: str) -> Any:
    return session.call(
        DESCRIBE, 1, group_ids=(group,), include_authorized_operations=False
    ).groups[0]


def describe_classic(session: Session, group: str) -> Any:
    return session.call(
        DESCRIBE_GROUPS, 5, groups=(group,), include_authorized_operations=False
    ).groups[0]


def stable_classic_group(session: Session, group: str, topic: str) -> ClassicMember:
    """One classic member holding both partitions of `topic`, generation 1."""
    classic = ClassicMember(session, group, topic)
    joined = classic.join()
    assert (joined.error_code, joined.generation_id, joined.leader) == (
        ErrorCode.none,
        1,
        classic.member_id,
    )
    synced = classic.sync({classic.member_id: {topic: [0, 1]}})
    assert synced.error_code == ErrorCode.none
    return classic


def upgraded_group(session: Session, group: str, topic: str) -> tuple[ClassicMember, str]:
    """The classic member above, and a consumer-protocol member that upgraded the group
    and now holds partition 1 after the classic member rejoined with partition 0."""
    tid = topic_id(session, topic)
    classic = stable_classic_group(session, group, topic)
    modern = new_member()
    joined = session.heartbeat(group, modern, 0, subscribed_topic_names=(topic,))
    assert (joined.error_code, joined.member_epoch, assigned(joined)) == (ErrorCode.none, 2, {})
    assert classic.heartbeat() == ErrorCode.rebalance_in_progress
    rejoined = classic.join()
    assert (rejoined.error_code, rejoined.generation_id) == (ErrorCode.none, 2)
    synced = classic.sync()
    assert assigned_partitions(synced.assignment) == (3, {topic: [0]})
    took = session.heartbeat(group, modern, 2)
    assert (took.member_epoch, assigned(took)) == (2, {tid: [1]})
    return classic, modern


def test_a_consumer_heartbeat_upgrades_a_live_classic_group(
    kafka_broker: Broker, kafka_topic, session: Session, group: str
) -> None:
    topic = kafka_topic(partitions=2)
    tid = topic_id(session, topic)
    classic = stable_classic_group(session, group, topic)
    modern = new_member()

    joined = session.heartbeat(group, modern, 0, subscribed_topic_names=(topic,))
    # The classic generation became the group epoch, which the newcomer moves on; its
    # partition is still held by the classic member, so it gets nothing yet.
    assert (joined.error_code, joined.member_epoch, assigned(joined)) == (ErrorCode.none, 2, {})
    described = describe(session, group)
    assert (described.group_state, described.group_epoch, described.assignment_epoch) == (
        "Reconciling",
        2,
        2,
    )
    members = {m.member_id: m for m in described.members}
    old, new = members[classic.member_id], members[modern]
    assert (old.member_type, old.member_epoch, new.member_type, new.member_epoch) == (0, 1, 1, 2)
    assert (old.client_host, old.subscribed_topic_names) == ("/127.0.0.1", (topic,))
    assert [tuple(tp.partitions) for tp in old.assignment.topic_partitions] == [(0, 1)]
    assert [tuple(tp.partitions) for tp in old.target_assignment.topic_partitions] == [(0,)]
    assert [tuple(tp.partitions) for tp in new.target_assignment.topic_partitions] == [(1,)]
    gone = describe_classic(session, group)
    assert (gone.error_code, gone.group_state) == (ErrorCode.none, "Dead")
    listed = session.call(LIST_GROUPS, 5, states_filter=(), types_filter=()).groups
    assert [(g.group_type, g.group_state) for g in listed if g.group_id == group] == [
        ("consumer", "Reconciling")
    ]

    # The classic member learns of the new epoch from its heartbeat, and rejoins.
    assert classic.heartbeat() == ErrorCode.rebalance_in_progress
    assert classic.heartbeat(generation=7) == ErrorCode.illegal_generation
    assert classic.sync().error_code == ErrorCode.rebalance_in_progress
    rejoined = classic.join()
    assert (
        rejoined.error_code,
        rejoined.generation_id,
        rejoined.protocol_type,
        rejoined.protocol_name,
        rejoined.leader,
        rejoined.members,
    ) == (ErrorCode.none, 2, "consumer", "range", "", ())
    assert classic.sync(protocol_name="roundrobin").error_code == (
        ErrorCode.inconsistent_group_protocol
    )
    synced = classic.sync()
    assert (synced.error_code, synced.protocol_type, synced.protocol_name) == (
        ErrorCode.none,
        "consumer",
        "range",
    )
    assert assigned_partitions(synced.assignment) == (3, {topic: [0]})
    took = session.heartbeat(group, modern, 2)
    assert (took.member_epoch, assigned(took)) == (2, {tid: [1]})
    assert classic.heartbeat() == ErrorCode.none
    assert describe(session, group).group_state == "Stable"

    # A classic member commits with its generation, which is its member epoch; an older
    # one commits the partitions it has held since then (Kafka 4.3: partition 0 since
    # generation 1, when the group was converted), a newer one nothing.
    assert commit_offset(session, group, topic, classic.member_id, 2) == ErrorCode.none
    assert commit_offset(session, group, topic, classic.member_id, 1) == ErrorCode.none
    assert commit_offset(session, group, topic, classic.member_id, 0) == (
        ErrorCode.illegal_generation
    )
    assert commit_offset(session, group, topic, classic.member_id, 3) == (
        ErrorCode.illegal_generation
    )


def test_classic_members_join_and_leave_a_consumer_group(
    kafka_broker: Broker, kafka_topic, session: Session, group: str
) -> None:
    topic = kafka_topic(partitions=2)
    classic, modern = upgraded_group(session, group, topic)
    newcomer = ClassicMember(session, group, topic)
    joined = newcomer.join()
    # A member id made by the broker: Kafka's Uuid, 16 bytes in URL-safe base64.
    assert len(base64.urlsafe_b64decode(newcomer.member_id + "==")) == 16
    assert (joined.error_code, joined.generation_id, joined.leader) == (ErrorCode.none, 3, "")
    # The newcomer moved the group epoch on: the first classic member must rejoin.
    assert classic.heartbeat() == ErrorCode.rebalance_in_progress
    epochs = sorted((m.member_type, m.member_epoch) for m in describe(session, group).members)
    assert epochs == [(0, 2), (0, 3), (1, 2)]

    # Only classic members speak the classic protocol, and only members of the group.
    stranger = ClassicMember(session, group, topic)
    stranger.member_id, stranger.generation = modern, 2
    assert stranger.heartbeat() == ErrorCode.unknown_member_id
    stranger.member_id = "nobody"
    assert stranger.heartbeat() == ErrorCode.unknown_member_id
    assert [m.error_code for m in stranger.leave().members] == [ErrorCode.unknown_member_id]

    left = newcomer.leave()
    assert (left.error_code, [(m.member_id, m.error_code) for m in left.members]) == (
        ErrorCode.none,
        [(newcomer.member_id, ErrorCode.none)],
    )
    after = describe(session, group)
    assert (after.group_epoch, len(after.members)) == (4, 2)


def test_the_last_consumer_member_leaving_makes_the_group_classic_again(
    kafka_broker: Broker, kafka_topic, session: Session, group: str
) -> None:
    topic = kafka_topic(partitions=2)
    classic, modern = upgraded_group(session, group, topic)

    left = session.heartbeat(group, modern, -1)
    assert (left.error_code, left.member_epoch) == (ErrorCode.none, -1)
    # A classic group again at the group epoch, rebalancing; its member keeps showing
    # the assignment it held.
    back = describe_classic(session, group)
    assert (back.error_code, back.group_state, back.protocol_type, back.protocol_data) == (
        ErrorCode.none,
        "PreparingRebalance",
        "consumer",
        "",
    )
    (member,) = back.members
    assert member.member_id == classic.member_id
    assert assigned_partitions(member.member_assignment) == (3, {topic: [0]})
    refused = describe(session, group)
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.group_id_not_found,
        f"Group {group} is not a consumer group.",
    )
    assert classic.heartbeat() == ErrorCode.rebalance_in_progress

    rejoined = classic.join()
    assert (rejoined.error_code, rejoined.generation_id, rejoined.leader) == (
        ErrorCode.none,
        3,
        classic.member_id,
    )
    synced = classic.sync({classic.member_id: {topic: [0, 1]}})
    assert assigned_partitions(synced.assignment) == (3, {topic: [0, 1]})
    assert describe_classic(session, group).group_state == "Stable"


def test_a_group_whose_assignor_keeps_user_data_is_not_upgraded(
    kafka_broker: Broker, kafka_topic, session: Session, group: str
) -> None:
    """A custom assignor's user data in the assignment cannot live in a consumer group."""
    topic = kafka_topic(partitions=2)
    topic_id(session, topic)
    classic = ClassicMember(session, group, topic)
    assert classic.join().error_code == ErrorCode.none
    synced = classic.sync({classic.member_id: {topic: [0, 1]}}, user_data=b"custom")
    assert synced.error_code == ErrorCode.none

    refused = session.heartbeat(group, new_member(), 0, subscribed_topic_names=(topic,))
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.group_id_not_found,
        f"Cannot upgrade classic group {group} to consumer group because an unsupported "
        "custom assignor is in use. Please refer to the documentation or switch to a "
        "default assignor before re-attempting the upgrade.",
    )
    # Nothing changed for the classic group.
    assert classic.heartbeat() == ErrorCode.none
    assert describe_classic(session, group).group_state == "Stable"


def test_a_classic_member_listing_an_assignor_twice_blocks_the_downgrade_as_on_kafka(
    kafka_broker: Broker, kafka_topic, session: Session, group: str
) -> None:
    """Kafka counts a protocol once per listing: `["range", "range"]` is accepted into a
    consumer group, but turning the group classic again must then pick a protocol its
    one member does not count as everyone's, and Kafka's vote throws. The leave fails
    (UNKNOWN_SERVER_ERROR, no message), the group stays as it was, and the member,
    counted twice for one member, is refused when it rejoins."""
    topic = kafka_topic(partitions=2)
    topic_id(session, topic)
    modern = new_member()
    joined = session.heartbeat(group, modern, 0, subscribed_topic_names=(topic,))
    # Kafka 4.3 starts a consumer group at epoch 1: the first join moves it to 2.
    assert (joined.error_code, joined.member_epoch) == (ErrorCode.none, 2)
    classic = ClassicMember(session, group, topic)
    classic.protocol_names = ("range", "range")
    entered = classic.join()
    assert (entered.error_code, entered.generation_id, entered.protocol_name) == (
        ErrorCode.none,
        3,
        "range",
    )
    assert classic.sync().error_code == ErrorCode.none

    left = session.heartbeat(group, modern, -1)
    assert (left.error_code, left.error_message, left.member_id, left.member_epoch) == (
        ErrorCode.unknown_server_error,
        None,
        None,
        0,
    )
    kept = describe(session, group)
    assert (kept.error_code, kept.group_epoch) == (ErrorCode.none, 3)
    assert {m.member_id: m.member_type for m in kept.members} == {
        modern: 1,
        classic.member_id: 0,
    }
    assert describe_classic(session, group).group_state == "Dead"

    rejoined = classic.join()
    assert (rejoined.error_code, rejoined.member_id) == (
        ErrorCode.inconsistent_group_protocol,
        "",
    )
