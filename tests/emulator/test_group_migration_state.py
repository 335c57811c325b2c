"""Classic members inside a consumer group, without the wire: their deadlines on a manual
clock, the upgrade's refusals, and the consumer-protocol codec the migration reads.

The wire and client tests (test_group_migration_wire.py, conformance) hold the steps
against real Kafka; here the timers fire at once and malformed bytes are cheap to try.
"""

from __future__ import annotations

import struct
import tracemalloc
from dataclasses import replace

import pytest
from group_wire import assignment, subscription
from kio.schema.errors import ErrorCode

from kafkatest.emulator.protocol.consumer_protocol import (
    MalformedConsumerProtocol,
    read_assignment,
    read_subscription,
    write_assignment,
)
from kafkatest.emulator.state.groups.classic.coordinator import GroupCoordinator
from kafkatest.emulator.state.groups.classic.membership import Group, NoCandidateProtocol
from kafkatest.emulator.state.groups.classic.model import GroupState, JoinRequest, Member, Protocol
from kafkatest.emulator.state.groups.clock import ManualClock
from kafkatest.emulator.state.groups.consumer.classic_members import ClassicMembers
from kafkatest.emulator.state.groups.consumer.coordinator import ConsumerGroupCoordinator
from kafkatest.emulator.state.groups.consumer.model import (
    ConsumerGroup,
    HeartbeatError,
    HeartbeatRequest,
)
from kafkatest.emulator.state.groups.consumer.settings import ConsumerGroupConfig
from kafkatest.emulator.state.groups.migration import GroupMigration, installed
from kafkatest.emulator.state.topics import TopicRegistry

REBALANCE_MS, CLASSIC_SESSION_MS = 30_000, 6_000


def coordinator(clock: ManualClock) -> ConsumerGroupCoordinator:
    registry = TopicRegistry()
    registry.create("t", 2, [[1]] * 2, {})
    config = ConsumerGroupConfig(heartbeat_interval_ms=500, session_timeout_ms=10_000)
    return ConsumerGroupCoordinator(clock, registry, config)


def modern_join(c: ConsumerGroupCoordinator, group: ConsumerGroup, member_id: str) -> int:
    request = HeartbeatRequest(
        group.group_id, member_id, 0, rebalance_timeout_ms=60_000,
        subscribed_topic_names=("t",), owned={},
    )  # fmt: skip
    result = c.heartbeat(request, group)
    assert result.error == ErrorCode.none
    return result.member_epoch


def classic_join(
    classic: ClassicMembers,
    group: ConsumerGroup,
    member_id: str,
    session_timeout_ms: int = CLASSIC_SESSION_MS,
) -> int:
    request = JoinRequest(
        group_id=group.group_id, member_id=member_id, group_instance_id=None,
        client_id="c", client_host="/127.0.0.1", session_timeout_ms=session_timeout_ms,
        rebalance_timeout_ms=REBALANCE_MS, protocol_type="consumer",
        protocols=(Protocol("range", subscription(["t"])),),
    )  # fmt: skip
    result = classic.join(group, request)
    assert result.error == ErrorCode.none, result
    return result.generation_id


def mixed_group(
    classic_session_ms: int = CLASSIC_SESSION_MS,
) -> tuple[ManualClock, ConsumerGroupCoordinator, ClassicMembers, ConsumerGroup]:
    """A consumer group of one consumer-protocol member "m" and one classic member "c"."""
    clock = ManualClock(start_ms=1_000)
    c = coordinator(clock)
    group = ConsumerGroup("g")
    modern_join(c, group, "m")
    classic = ClassicMembers(c)
    classic_join(classic, group, "c", classic_session_ms)
    return clock, c, classic, group


def keep_modern_alive(c: ConsumerGroupCoordinator, group: ConsumerGroup) -> None:
    member = group.members["m"]
    c.heartbeat(HeartbeatRequest("g", "m", member.member_epoch, owned=member.assigned), group)


def outlive_rebalance_timeout(
    clock: ManualClock,
    c: ConsumerGroupCoordinator,
    classic: ClassicMembers,
    group: ConsumerGroup,
    answers: set[ErrorCode],
) -> None:
    """Both members heartbeat (each answer to "c" one of `answers`) until "c"'s rebalance
    timeout; "c" is fenced exactly then."""
    epoch = group.members["c"].member_epoch
    for _ in range(REBALANCE_MS // 5_000 - 1):
        clock.advance(5_000)
        assert classic.heartbeat(group, "c", None, epoch) in answers
        keep_modern_alive(c, group)
    clock.advance(4_999)
    assert "c" in group.members
    clock.advance(2)
    assert "c" not in group.members


def test_a_classic_member_told_to_rejoin_is_fenced_when_it_does_not() -> None:
    clock, c, classic, group = mixed_group()
    c_epoch = group.members["c"].member_epoch
    c.fence(group, "m")  # the epoch moves on without the modern member
    modern_join(c, group, "m")
    assert classic.heartbeat(group, "c", None, c_epoch) == ErrorCode.rebalance_in_progress
    # Heartbeats keep its session, not its seat: it was asked to rejoin.
    outlive_rebalance_timeout(clock, c, classic, group, {ErrorCode.rebalance_in_progress})


def test_a_classic_member_that_joins_but_never_syncs_is_fenced() -> None:
    clock, c, classic, group = mixed_group()
    # Once "m" gives up partition 1, "c" is asked to rejoin for it: that asks for a
    # join within the rebalance timeout, but the sync it owes is due first.
    answers = {ErrorCode.none, ErrorCode.rebalance_in_progress}
    outlive_rebalance_timeout(clock, c, classic, group, answers)


def test_a_classic_member_keeps_the_session_timeout_it_joined_with() -> None:
    clock, c, classic, group = mixed_group()
    epoch = group.members["c"].member_epoch
    sync = classic.sync(group, "c", None, epoch, "consumer", "range")
    assert sync.error == ErrorCode.none
    clock.advance(CLASSIC_SESSION_MS - 1)
    keep_modern_alive(c, group)
    assert "c" in group.members
    clock.advance(2)
    keep_modern_alive(c, group)
    assert set(group.members) == {"m"}  # the consumer protocol's 10 s session is longer


def test_the_timers_of_a_group_handed_back_to_the_classic_coordinator_do_nothing() -> None:
    # The classic member's session (Kafka clients' 45 s) outlasts the consumer
    # protocol's 10 s, so the old group's timer for "m" comes due first.
    clock, c, _, group = mixed_group(classic_session_ms=45_000)
    classic = GroupCoordinator(clock)
    installed(classic, c)
    c.fence(group, "m")  # the last consumer-protocol member leaves: the group is classic
    assert "g" not in c.groups
    handed_back = classic.group("g")
    assert handed_back is not None and set(handed_back.members) == {"c"}
    # The old consumer group's session and rebalance timers come due: they must neither
    # fail nor touch the id, which is the classic group's now.
    clock.advance(3 * REBALANCE_MS)
    assert "g" not in c.groups


def test_a_classic_join_with_a_malformed_subscription_is_refused() -> None:
    _, _, classic, group = mixed_group()
    request = JoinRequest(
        group_id="g", member_id="", group_instance_id=None, client_id="c",
        client_host="/127.0.0.1", session_timeout_ms=CLASSIC_SESSION_MS,
        rebalance_timeout_ms=REBALANCE_MS, protocol_type="consumer",
        protocols=(Protocol("range", b"\x00\x03\x00\x00\x7f\xff"),),  # 32767 topics promised
        require_known_member_id=False,
    )  # fmt: skip
    assert classic.join(group, request).error == ErrorCode.unknown_server_error
    assert set(group.members) == {"m", "c"}


def classic_group(metadata: bytes, assigned: bytes) -> Group:
    member = Member(
        member_id="old", group_instance_id=None, client_id="c", client_host="/127.0.0.1",
        session_timeout_ms=CLASSIC_SESSION_MS, rebalance_timeout_ms=REBALANCE_MS,
        protocol_type="consumer", protocols=(Protocol("range", metadata),),
        heartbeat_deadline_ms=0, assignment=assigned,
    )  # fmt: skip
    return Group(
        "g", GroupState.STABLE, generation_id=4, protocol_type="consumer",
        protocol_name="range", leader_id="old", members={"old": member},
    )  # fmt: skip


def test_the_upgrade_carries_members_over_at_the_classic_generation() -> None:
    c = coordinator(ManualClock())
    migration = GroupMigration(GroupCoordinator(ManualClock()), c)
    group = migration.upgraded(classic_group(subscription(["t"]), assignment({"t": [1]})))
    member = group.members["old"]
    (topic_id,) = member.assigned
    assert (group.group_epoch, group.assignment_epoch) == (4, 4)
    assert (member.member_epoch, member.assigned, group.targets["old"]) == (
        4,
        {topic_id: frozenset({1})},
        {topic_id: frozenset({1})},
    )
    assert member.classic is not None and member.classic.session_timeout_ms == CLASSIC_SESSION_MS
    assert group.partition_epochs == {(topic_id, 1): 4}


@pytest.mark.parametrize(
    ("metadata", "assigned"),
    [
        (b"\x00\x03\x00\x00\x7f\xff", assignment({"t": [0]})),  # 32767 topics promised
        (subscription(["t"]), b"\x00"),  # a truncated assignment
    ],
)
def test_the_upgrade_of_a_group_with_malformed_consumer_bytes_is_refused(
    metadata: bytes, assigned: bytes
) -> None:
    c = coordinator(ManualClock())
    migration = GroupMigration(GroupCoordinator(ManualClock()), c)
    with pytest.raises(HeartbeatError) as refused:
        migration.upgraded(classic_group(metadata, assigned))
    assert (refused.value.error, refused.value.message) == (
        ErrorCode.group_id_not_found,
        "Cannot upgrade classic group g to consumer group because the embedded consumer "
        "protocol is malformed.",
    )


def test_the_codec_reads_what_kafka_clients_write() -> None:
    read = read_subscription(subscription(["a", "b"], owned={"a": [2, 0]}))
    assert (read.version, read.topics, read.owned, read.rack_id) == (
        3, ("a", "b"), {"a": (2, 0)}, None,
    )  # fmt: skip
    # Version 0 (topics and user data only), and a future version read as the newest.
    v0 = struct.pack(">hih", 0, 1, 1) + b"x" + struct.pack(">i", 3) + b"abc"
    assert read_subscription(v0).topics == ("x",)
    assert read_subscription(struct.pack(">h", 9) + subscription(["y"])[2:]).version == 3
    written = write_assignment(1, {"t": (0, 3)})
    assert written == struct.pack(">hih", 1, 1, 1) + b"t" + struct.pack(">iiii", 2, 0, 3, -1)
    assert read_assignment(written).partitions == {"t": (0, 3)}
    assert read_assignment(assignment({"t": [1]}, user_data=b"u")).has_user_data


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00",
        b"\xff\xff\x00\x00\x00\x00",  # a negative version
        struct.pack(">hi", 1, 2**31 - 1),  # a count no bytes back
        struct.pack(">hih", 1, 1, 40) + b"short",  # a name longer than what is left
        struct.pack(">hih", 1, 1, 2) + b"\xff\xfe",  # not UTF-8
    ],
)
def test_the_codec_refuses_malformed_bytes_without_trusting_their_counts(data: bytes) -> None:
    """A count of 2^31 - 1 with no bytes behind it must not size anything: the peak of
    what the refusal allocates is measured (not a time, which a loaded machine skews)."""
    tracemalloc.start()
    try:
        with pytest.raises(MalformedConsumerProtocol):
            read_subscription(data)
        with pytest.raises(MalformedConsumerProtocol):
            read_assignment(data)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_a_downgrade_kafka_cannot_vote_on_keeps_the_member_and_retries_its_timer() -> None:
    """A classic member listing "range" twice makes the downgrade's vote fail (as Kafka's
    throws): the expired consumer-protocol member stays, its fencing retried, not raised."""
    clock = ManualClock(start_ms=1_000)
    c = coordinator(clock)
    group = ConsumerGroup("g")
    modern_join(c, group, "m")
    classic = ClassicMembers(c)
    twice = JoinRequest(
        group_id="g", member_id="c", group_instance_id=None, client_id="c",
        client_host="/127.0.0.1", session_timeout_ms=60_000, rebalance_timeout_ms=60_000,
        protocol_type="consumer",
        protocols=(Protocol("range", subscription(["t"])),) * 2,
    )  # fmt: skip
    assert classic.join(group, twice).error == ErrorCode.none
    installed(GroupCoordinator(clock), c)

    with pytest.raises(NoCandidateProtocol):
        c.fence(group, "m")
    clock.advance(20_000)  # "m"'s 10 s session ran out: its fencing fails, again and again
    assert set(group.members) == {"m", "c"} and c.groups["g"] is group


def test_a_classic_group_whose_only_member_lists_a_protocol_twice_keeps_rebalancing() -> None:
    """Kafka's vote throws when the join completes: the join is never answered and the
    group stays rebalancing (no exception escapes the coordinator)."""
    import asyncio

    async def scenario() -> None:
        clock = ManualClock(start_ms=1_000)
        classic = GroupCoordinator(clock)
        request = JoinRequest(
            group_id="solo", member_id="", group_instance_id=None, client_id="c",
            client_host="/127.0.0.1", session_timeout_ms=60_000, rebalance_timeout_ms=60_000,
            protocol_type="consumer", protocols=(Protocol("range", b"sub"),) * 2,
        )  # fmt: skip
        first = await classic.join_group(request)
        assert first.error == ErrorCode.member_id_required
        known = replace(request, member_id=first.member_id)
        waiting = asyncio.ensure_future(classic.join_group(known))
        for _ in range(10):
            await asyncio.sleep(0)
        clock.advance(120_000)
        for _ in range(10):
            await asyncio.sleep(0)
        assert not waiting.done()
        described = classic.describe_group("solo")
        assert described is not None and described.state == GroupState.PREPARING_REBALANCE
        waiting.cancel()

    asyncio.run(scenario())
