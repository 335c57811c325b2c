"""OffsetDelete in the group coordinator: what a live group may lose, and what not.

kafka-consumer-groups --delete-offsets on an idle group is covered on both
backends in tests/compat; these are the refusals that need a live member.
"""

from __future__ import annotations

import asyncio
import struct

from kio.schema.errors import ErrorCode

from kafkatest.emulator.protocol.consumer_protocol import subscribed_topics
from kafkatest.emulator.state.groups.classic.coordinator import GroupCoordinator
from kafkatest.emulator.state.groups.classic.model import JoinRequest, Protocol
from kafkatest.emulator.state.groups.clock import ManualClock
from kafkatest.emulator.state.groups.offsets import CommittedOffset

OFFSET = CommittedOffset(offset=5, leader_epoch=-1, metadata="", commit_timestamp_ms=-1)


def subscription(*topics: str, version: int = 1) -> bytes:
    """A consumer-protocol Subscription as Java clients send it (no owned partitions)."""
    names = b"".join(struct.pack(">h", len(t)) + t.encode() for t in topics)
    owned = struct.pack(">i", 0) if version >= 1 else b""
    generation = struct.pack(">i", -1) if version >= 2 else b""
    rack = struct.pack(">h", -1) if version >= 3 else b""
    head = struct.pack(">hi", version, len(topics)) + names + struct.pack(">i", -1)
    return head + owned + generation + rack


async def live_group(coordinator: GroupCoordinator, protocol_type: str, metadata: bytes) -> None:
    """Group "g" with one member that has synced (Stable), offsets committed for two topics."""
    joined = await coordinator.join_group(
        JoinRequest(
            group_id="g",
            member_id="",
            group_instance_id=None,
            client_id="c",
            client_host="/127.0.0.1",
            session_timeout_ms=10_000,
            rebalance_timeout_ms=10_000,
            protocol_type=protocol_type,
            protocols=(Protocol("range", metadata),),
            require_known_member_id=False,
        )
    )
    await coordinator.sync_group(
        "g", joined.member_id, joined.generation_id, assignments={joined.member_id: b""}
    )
    errors = coordinator.commit_offsets(
        "g",
        {("read", 0): OFFSET, ("other", 0): OFFSET},
        generation_id=joined.generation_id,
        member_id=joined.member_id,
    )
    assert set(errors.values()) == {ErrorCode.none}


def test_subscribed_topics_of_every_subscription_version() -> None:
    for version in (0, 1, 3):
        assert subscribed_topics(subscription("a", "b", version=version)) == {"a", "b"}
    assert subscribed_topics(b"\x00\x01") is None
    assert subscribed_topics(b"\x00\x00\x00\x00\x00\x01\x00\x09ab") is None


def test_live_consumer_group_keeps_offsets_of_topics_it_reads() -> None:
    async def body() -> None:
        coordinator = GroupCoordinator(ManualClock())
        await live_group(coordinator, "consumer", subscription("read"))
        assert coordinator.delete_offsets("g", [("read", 0), ("other", 0)]) == (
            ErrorCode.none,
            {("read", 0): ErrorCode.group_subscribed_to_topic, ("other", 0): ErrorCode.none},
        )
        assert set(coordinator.fetch_offsets("g")) == {("read", 0)}

    asyncio.run(body())


def test_live_group_of_another_protocol_refuses_and_unknown_group_is_not_found() -> None:
    async def body() -> None:
        coordinator = GroupCoordinator(ManualClock())
        await live_group(coordinator, "connect", b"opaque")
        assert coordinator.delete_offsets("g", [("other", 0)]) == (ErrorCode.non_empty_group, {})
        assert len(coordinator.fetch_offsets("g")) == 2
        assert coordinator.delete_offsets("ghost", [("other", 0)]) == (
            ErrorCode.group_id_not_found,
            {},
        )

    asyncio.run(body())
