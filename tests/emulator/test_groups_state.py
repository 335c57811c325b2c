"""The classic group coordinator's state machine, without sockets.

Time is a ManualClock so session and rebalance timeouts are crossed instantly.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import pytest
from kio.schema.errors import ErrorCode

from kafkatest.emulator.state.groups.classic.coordinator import (
    GroupCoordinator,
    GroupCoordinatorConfig,
)
from kafkatest.emulator.state.groups.classic.model import (
    GroupState,
    JoinRequest,
    JoinResult,
    LeavingMember,
    Protocol,
)
from kafkatest.emulator.state.groups.classic.rebalance import (
    NEW_GROUP_JOIN_WINDOW_MS,
    NEW_GROUP_SETTLE_MS,
)
from kafkatest.emulator.state.groups.clock import ManualClock, PolledClock
from kafkatest.emulator.state.groups.lookups import BURST_GAP_MS, RecentLookups
from kafkatest.emulator.state.groups.offsets import CommittedOffset, OffsetStore

T = TypeVar("T")
SESSION_MS = 10_000
REBALANCE_MS = 30_000


def run(test: Callable[[], Coroutine[Any, Any, None]]) -> Callable[[], None]:
    """Run an async test body on a fresh loop (no pytest-asyncio needed)."""

    def wrapper() -> None:
        asyncio.run(test())

    wrapper.__name__ = test.__name__
    return wrapper


async def settle() -> None:
    """Let woken coroutines run until they block again."""
    for _ in range(10):
        await asyncio.sleep(0)


def request(
    member_id: str = "",
    *,
    group: str = "g",
    client: str = "client",
    instance: str | None = None,
    protocols: tuple[Protocol, ...] = (Protocol("range", b"sub"),),
    protocol_type: str = "consumer",
    require_known: bool = False,
) -> JoinRequest:
    return JoinRequest(
        group_id=group,
        member_id=member_id,
        group_instance_id=instance,
        client_id=client,
        client_host="/127.0.0.1",
        session_timeout_ms=SESSION_MS,
        rebalance_timeout_ms=REBALANCE_MS,
        protocol_type=protocol_type,
        protocols=protocols,
        require_known_member_id=require_known,
    )


def committed(offset: int, metadata: str = "") -> CommittedOffset:
    return CommittedOffset(offset, -1, metadata, -1)


def start(awaitable: Awaitable[T]) -> asyncio.Task[T]:
    async def wrap() -> T:
        return await awaitable

    return asyncio.ensure_future(wrap())


async def stable_group(
    coordinator: GroupCoordinator, count: int, group: str = "g"
) -> list[JoinResult]:
    """Join `count` members together and complete the SyncGroup round."""
    first = await coordinator.join_group(request(group=group, client="m0"))
    if count > 1:
        joins = [
            start(coordinator.join_group(request(group=group, client=f"m{i}")))
            for i in range(1, count)
        ]
        await settle()
        rejoin = start(coordinator.join_group(request(first.member_id, group=group)))
        await settle()
        results = [rejoin.result(), *(j.result() for j in joins)]
    else:
        results = [first]
    leader = next(r for r in results if r.member_id == r.leader_id)
    assignments = {r.member_id: r.member_id.encode() for r in results}
    syncs = [
        start(
            coordinator.sync_group(
                group,
                r.member_id,
                r.generation_id,
                assignments=assignments if r is leader else None,
            )
        )
        for r in results
        if r is not leader
    ]
    await settle()
    await coordinator.sync_group(
        group, leader.member_id, leader.generation_id, assignments=assignments
    )
    await settle()
    assert all(s.result().error == ErrorCode.none for s in syncs)
    return results


@run
async def test_member_id_required_then_join_makes_a_stable_group_of_one() -> None:
    coordinator = GroupCoordinator(ManualClock())
    first = await coordinator.join_group(request(require_known=True))
    assert first.error == ErrorCode.member_id_required
    assert first.member_id.startswith("client-")

    joined = await coordinator.join_group(request(first.member_id, require_known=True))
    assert joined.error == ErrorCode.none
    assert (joined.generation_id, joined.leader_id) == (1, first.member_id)
    assert joined.protocol_name == "range"
    assert [(m.member_id, m.metadata) for m in joined.members] == [(first.member_id, b"sub")]

    synced = await coordinator.sync_group(
        "g", joined.member_id, 1, assignments={joined.member_id: b"a"}
    )
    assert (synced.error, synced.assignment) == (ErrorCode.none, b"a")
    assert coordinator.describe_group("g").state == GroupState.STABLE
    assert coordinator.heartbeat("g", joined.member_id, 1) == ErrorCode.none


@run
async def test_second_member_triggers_rebalance_and_followers_wait_for_the_leader() -> None:
    coordinator = GroupCoordinator(ManualClock())
    (a,) = await stable_group(coordinator, 1)

    b_join = start(coordinator.join_group(request(client="b")))
    await settle()
    assert not b_join.done(), "the join must wait for the existing member to rejoin"
    assert coordinator.describe_group("g").state == GroupState.PREPARING_REBALANCE
    assert coordinator.heartbeat("g", a.member_id, 1) == ErrorCode.rebalance_in_progress

    a2 = await coordinator.join_group(request(a.member_id))
    await settle()
    b = b_join.result()
    assert a2.generation_id == b.generation_id == 2
    assert a2.leader_id == b.leader_id == a.member_id
    assert {m.member_id for m in a2.members} == {a.member_id, b.member_id}
    assert b.members == ()

    b_sync = start(coordinator.sync_group("g", b.member_id, 2))
    await settle()
    assert not b_sync.done(), "a follower waits for the leader's assignment"
    assert coordinator.describe_group("g").state == GroupState.COMPLETING_REBALANCE
    await coordinator.sync_group("g", a.member_id, 2, assignments={b.member_id: b"for-b"})
    await settle()
    assert b_sync.result().assignment == b"for-b"
    assert coordinator.describe_group("g").state == GroupState.STABLE


@run
async def test_member_that_does_not_rejoin_is_dropped_after_the_rebalance_timeout() -> None:
    clock = ManualClock()
    coordinator = GroupCoordinator(clock)
    a, b = await stable_group(coordinator, 2)
    c_join = start(coordinator.join_group(request(client="c")))
    a_join = start(coordinator.join_group(request(a.member_id)))
    await settle()
    for _ in range(REBALANCE_MS // 5_000 - 1):
        clock.advance(5_000)
        # Heartbeating keeps b's session alive, but only rejoining keeps it in the group.
        assert coordinator.heartbeat("g", b.member_id, 2) == ErrorCode.rebalance_in_progress
    await settle()
    assert not a_join.done()
    clock.advance(5_000)
    await settle()
    result = a_join.result()
    assert result.generation_id == 3
    assert {m.member_id for m in result.members} == {a.member_id, c_join.result().member_id}
    assert coordinator.heartbeat("g", b.member_id, 3) == ErrorCode.unknown_member_id


@run
async def test_silent_member_expires_after_its_session_timeout() -> None:
    clock = ManualClock()
    coordinator = GroupCoordinator(clock)
    a, b = await stable_group(coordinator, 2)
    for _ in range(3):
        clock.advance(SESSION_MS // 2)
        assert coordinator.heartbeat("g", a.member_id, a.generation_id) in (
            ErrorCode.none,
            ErrorCode.rebalance_in_progress,
        )
    assert coordinator.heartbeat("g", a.member_id, 2) == ErrorCode.rebalance_in_progress
    assert coordinator.heartbeat("g", b.member_id, 2) == ErrorCode.unknown_member_id
    rejoined = await coordinator.join_group(request(a.member_id))
    assert rejoined.generation_id == 3
    assert [m.member_id for m in rejoined.members] == [a.member_id]


@run
async def test_batch_leave_empties_the_group_and_bumps_the_generation() -> None:
    coordinator = GroupCoordinator(ManualClock())
    a, b = await stable_group(coordinator, 2)
    result = coordinator.leave_group(
        "g", [LeavingMember(a.member_id), LeavingMember(b.member_id), LeavingMember("ghost")]
    )
    assert result.error == ErrorCode.none
    assert [error for _, error in result.member_errors] == [
        ErrorCode.none,
        ErrorCode.none,
        ErrorCode.unknown_member_id,
    ]
    group = coordinator.group("g")
    assert group is not None
    assert (group.state, group.generation_id, group.members) == (GroupState.EMPTY, 3, {})
    unknown_group = coordinator.leave_group("nope", [LeavingMember("x")])
    assert unknown_group.member_errors[0][1] == ErrorCode.unknown_member_id


@run
async def test_leaving_member_lets_the_rest_rebalance_without_waiting() -> None:
    coordinator = GroupCoordinator(ManualClock())
    a, b = await stable_group(coordinator, 2)
    coordinator.leave_group("g", [LeavingMember(b.member_id)])
    rejoined = await coordinator.join_group(request(a.member_id))
    assert (rejoined.error, rejoined.generation_id) == (ErrorCode.none, 3)
    assert [m.member_id for m in rejoined.members] == [a.member_id]


@run
async def test_sync_and_heartbeat_errors() -> None:
    coordinator = GroupCoordinator(ManualClock())
    a, b = await stable_group(coordinator, 2)
    assert (await coordinator.sync_group("g", a.member_id, 1)).error == ErrorCode.illegal_generation
    assert (await coordinator.sync_group("g", "who", 2)).error == ErrorCode.unknown_member_id
    assert (await coordinator.sync_group("nope", "who", 2)).error == ErrorCode.unknown_member_id
    assert coordinator.heartbeat("g", a.member_id, 7) == ErrorCode.illegal_generation
    assert coordinator.heartbeat("", a.member_id, 2) == ErrorCode.invalid_group_id
    in_stable = await coordinator.sync_group("g", b.member_id, 2)
    assert in_stable.assignment == b.member_id.encode(), "Stable repeats the assignment"

    start(coordinator.join_group(request(client="c")))
    await settle()
    preparing = await coordinator.sync_group("g", b.member_id, 2)
    assert preparing.error == ErrorCode.rebalance_in_progress


@run
async def test_waiting_follower_hears_of_a_new_rebalance() -> None:
    coordinator = GroupCoordinator(ManualClock())
    a, b = await stable_group(coordinator, 2)
    c_join = start(coordinator.join_group(request(client="c")))
    a_join = start(coordinator.join_group(request(a.member_id)))
    b_join = start(coordinator.join_group(request(b.member_id)))
    await settle()
    generation = a_join.result().generation_id
    follower = next(t.result() for t in (b_join, c_join) if t.result().members == ())
    waiting = start(coordinator.sync_group("g", follower.member_id, generation))
    await settle()
    start(coordinator.join_group(request(client="d")))
    await settle()
    assert waiting.result().error == ErrorCode.rebalance_in_progress


@run
async def test_known_member_repeating_join_while_completing_gets_same_generation() -> None:
    coordinator = GroupCoordinator(ManualClock())
    joined = await coordinator.join_group(request())
    again = await coordinator.join_group(request(joined.member_id))
    assert (again.error, again.generation_id) == (ErrorCode.none, joined.generation_id)


@run
async def test_inconsistent_protocols_are_rejected() -> None:
    coordinator = GroupCoordinator(ManualClock())
    await stable_group(coordinator, 1)
    other_type = await coordinator.join_group(request(protocol_type="connect"))
    assert other_type.error == ErrorCode.inconsistent_group_protocol
    no_common = await coordinator.join_group(request(protocols=(Protocol("roundrobin", b""),)))
    assert no_common.error == ErrorCode.inconsistent_group_protocol
    assert (await coordinator.join_group(request(group=""))).error == ErrorCode.invalid_group_id


@run
async def test_protocol_chosen_by_votes_among_those_all_support() -> None:
    coordinator = GroupCoordinator(ManualClock())
    a = await coordinator.join_group(
        request(protocols=(Protocol("sticky", b"s"), Protocol("range", b"r")))
    )
    b_join = start(coordinator.join_group(request(protocols=(Protocol("range", b"r"),))))
    await settle()
    a2 = await coordinator.join_group(
        request(a.member_id, protocols=(Protocol("sticky", b"s"), Protocol("range", b"r")))
    )
    await settle()
    assert a2.protocol_name == b_join.result().protocol_name == "range"
    assert {m.metadata for m in a2.members} == {b"r"}


@run
async def test_unanswered_member_id_required_is_forgotten_after_session_timeout() -> None:
    clock = ManualClock()
    coordinator = GroupCoordinator(clock)
    pending = await coordinator.join_group(request(require_known=True))
    assert coordinator.group_ids() == ["g"]
    clock.advance(SESSION_MS)
    assert coordinator.group_ids() == []
    late = await coordinator.join_group(request(pending.member_id, require_known=True))
    assert late.error == ErrorCode.unknown_member_id


@run
async def test_pending_member_holds_the_join_until_it_comes_back() -> None:
    coordinator = GroupCoordinator(ManualClock())
    a_id = (await coordinator.join_group(request(require_known=True))).member_id
    b_id = (await coordinator.join_group(request(require_known=True))).member_id
    a_join = start(coordinator.join_group(request(a_id, require_known=True)))
    await settle()
    assert not a_join.done()
    b = await coordinator.join_group(request(b_id, require_known=True))
    await settle()
    assert a_join.result().generation_id == b.generation_id == 1


@run
async def test_members_that_never_sync_are_removed() -> None:
    clock = ManualClock()
    coordinator = GroupCoordinator(clock)
    joined = await coordinator.join_group(request())
    clock.advance(REBALANCE_MS)
    await settle()
    assert coordinator.heartbeat("g", joined.member_id, 1) == ErrorCode.unknown_member_id
    assert coordinator.describe_group("g").state == GroupState.EMPTY


def windowed_coordinator() -> tuple[ManualClock, GroupCoordinator]:
    """A coordinator with the broker's new-group window, on a clock the test moves."""
    clock = ManualClock()
    config = GroupCoordinatorConfig(new_group_join_window_ms=NEW_GROUP_JOIN_WINDOW_MS)
    return clock, GroupCoordinator(clock, config)


async def forms_after(
    clock: ManualClock, ms: int, joins: list[asyncio.Task[JoinResult]], why: str = ""
) -> None:
    """The waiting joins are answered exactly `ms` from now, all in generation 1."""
    clock.advance(ms - 1)
    await settle()
    assert not any(join.done() for join in joins), why or f"answered before {ms} ms"
    clock.advance(1)
    await settle()
    assert {join.result().generation_id for join in joins} == {1}
    assert sum(len(join.result().members) for join in joins) == len(joins)


@run
async def test_initial_delay_gathers_members_into_one_generation() -> None:
    clock = ManualClock()
    config = GroupCoordinatorConfig(initial_rebalance_delay_ms=100)
    coordinator = GroupCoordinator(clock, config)
    a = start(coordinator.join_group(request(client="a")))
    await settle()
    clock.advance(60)
    b = start(coordinator.join_group(request(client="b")))
    await settle()
    clock.advance(60)
    await settle()
    assert not a.done(), "a new member arrived during the delay, so it is extended"
    clock.advance(100)
    await settle()
    assert a.result().generation_id == b.result().generation_id == 1
    assert len(a.result().members) + len(b.result().members) == 2


@run
async def test_new_group_window_stays_open_while_members_keep_arriving() -> None:
    """With Kafka's delay at 0 a new group still waits its short window; a member who
    arrives near its end keeps it open until no one new has come for the settle time."""
    clock, coordinator = windowed_coordinator()
    assert NEW_GROUP_SETTLE_MS < NEW_GROUP_JOIN_WINDOW_MS
    a = start(coordinator.join_group(request(client="a")))
    await settle()
    clock.advance(NEW_GROUP_JOIN_WINDOW_MS - 5)
    b = start(coordinator.join_group(request(client="b")))
    await settle()
    clock.advance(5)  # the window ends 5 ms after b came
    await settle()
    assert not a.done(), "a member was still arriving, so the window stays open"
    await forms_after(clock, NEW_GROUP_SETTLE_MS - 5, [a, b])


@run
async def test_new_group_window_closes_on_time_when_members_came_early() -> None:
    """Members who all came early in the window do not extend it: four consumers
    started together arrive within a few milliseconds of each other."""
    clock, coordinator = windowed_coordinator()
    a = start(coordinator.join_group(request(client="a")))
    await settle()
    clock.advance(3)
    b = start(coordinator.join_group(request(client="b")))
    await settle()
    await forms_after(clock, NEW_GROUP_JOIN_WINDOW_MS - 3, [a, b], "the window's minimum")


@run
async def test_an_early_member_waits_for_those_who_looked_the_coordinator_up_with_it() -> None:
    """librdkafka loses its first lookup with its bootstrap connection and asks again
    50 ms later; a member whose first answer came back in time joins at once. A lookup
    counts as an arrival, so the window holds that member for the others, whose joins
    follow their second lookups a few milliseconds later (more on a loaded machine)."""
    clock, coordinator = windowed_coordinator()
    for _ in range(4):
        coordinator.coordinator_looked_up("g")
    clock.advance(3)
    early = start(coordinator.join_group(request(client="early")))
    await settle()
    clock.advance(NEW_GROUP_JOIN_WINDOW_MS - 5)  # a second lookup, near the window's end
    coordinator.coordinator_looked_up("g")
    clock.advance(8)  # past the window's minimum: only the lookup keeps it open
    await settle()
    assert not early.done(), "a lookup within the settle time keeps the window open"
    late = start(coordinator.join_group(request(client="late")))
    await settle()
    await forms_after(clock, NEW_GROUP_SETTLE_MS, [early, late], "someone arrived just now")


@run
async def test_the_window_closes_a_settle_time_after_the_last_arrival_when_lookups_were_early() -> (
    None
):
    """Consumers that looked the coordinator up, then all joined once the window's
    minimum had passed: the group forms a settle time after the last of them, not a
    whole window after the first join."""
    clock, coordinator = windowed_coordinator()
    coordinator.coordinator_looked_up("g")
    clock.advance(NEW_GROUP_JOIN_WINDOW_MS)
    a = start(coordinator.join_group(request(client="a")))
    await settle()
    clock.advance(2)
    b = start(coordinator.join_group(request(client="b")))
    await settle()
    await forms_after(clock, NEW_GROUP_SETTLE_MS, [a, b])


@run
async def test_a_lookup_long_before_the_join_does_not_open_the_window() -> None:
    """A lookup more than BURST_GAP_MS old (an admin describing the group, say) says
    nothing about who is coming: the window then counts from the first join."""
    clock, coordinator = windowed_coordinator()
    coordinator.coordinator_looked_up("g")
    clock.advance(BURST_GAP_MS + 1)
    a = start(coordinator.join_group(request(client="a")))
    await settle()
    await forms_after(clock, NEW_GROUP_JOIN_WINDOW_MS, [a], "the minimum, from the join")


def test_recent_lookups_forget_ids_once_their_burst_is_over() -> None:
    """Group ids are the client's choice: a flood of distinct ids is not kept."""
    lookups = RecentLookups()
    for index in range(1000):
        lookups.note(f"g{index}", now_ms=index // 100)
    assert len(lookups) == 1000
    lookups.note("g0", now_ms=BURST_GAP_MS + 10)  # every other id is older than a burst gap
    assert len(lookups) == 1
    burst = lookups.burst("g0", now_ms=BURST_GAP_MS + 10)
    assert burst is not None and burst.first_ms == burst.last_ms == BURST_GAP_MS + 10
    assert lookups.burst("g1", now_ms=BURST_GAP_MS + 10) is None


@run
async def test_restarted_static_member_takes_over_without_a_rebalance() -> None:
    coordinator = GroupCoordinator(ManualClock())
    first = await coordinator.join_group(request(instance="i-1"))
    await coordinator.sync_group("g", first.member_id, 1, assignments={first.member_id: b"p0"})
    again = await coordinator.join_group(request(instance="i-1"))
    assert again.error == ErrorCode.none
    assert again.member_id != first.member_id and again.generation_id == 1
    assert again.skip_assignment, "the replaced leader keeps the current assignment"
    synced = await coordinator.sync_group("g", again.member_id, 1, group_instance_id="i-1")
    assert synced.assignment == b"p0"
    old = coordinator.heartbeat("g", first.member_id, 1, group_instance_id="i-1")
    assert old == ErrorCode.fenced_instance_id
    by_instance = coordinator.leave_group("g", [LeavingMember("", "i-1")])
    assert by_instance.member_errors[0][1] == ErrorCode.none
    assert coordinator.describe_group("g").state == GroupState.EMPTY


@run
async def test_commits_outside_group_management_only_while_the_group_is_empty() -> None:
    coordinator = GroupCoordinator(ManualClock())
    tp = ("t", 0)
    assert coordinator.commit_offsets("solo", {tp: committed(5, "m")}) == {tp: ErrorCode.none}
    fetched = coordinator.fetch_offsets("solo", [tp, ("t", 1)])
    stored = fetched[tp]
    assert stored is not None and (stored.offset, stored.metadata) == (5, "m")
    assert fetched[("t", 1)] is None
    assert coordinator.describe_group("solo").state == GroupState.EMPTY

    (a,) = await stable_group(coordinator, 1)
    assert coordinator.commit_offsets("g", {tp: committed(1)}) == {tp: ErrorCode.unknown_member_id}
    assert coordinator.commit_offsets("g", {tp: committed(1)}, 0, a.member_id) == {
        tp: ErrorCode.illegal_generation
    }
    assert coordinator.commit_offsets("g", {tp: committed(1)}, 1, a.member_id) == {
        tp: ErrorCode.none
    }
    assert coordinator.commit_offsets("new", {tp: committed(1)}, 3, "x") == {
        tp: ErrorCode.illegal_generation
    }
    too_big = committed(1, "x" * 5000)
    assert coordinator.commit_offsets("solo", {tp: too_big}) == {
        tp: ErrorCode.offset_metadata_too_large
    }


@run
async def test_commit_during_completing_rebalance_is_refused() -> None:
    coordinator = GroupCoordinator(ManualClock())
    joined = await coordinator.join_group(request())
    result = coordinator.commit_offsets("g", {("t", 0): committed(1)}, 1, joined.member_id)
    assert result == {("t", 0): ErrorCode.rebalance_in_progress}


@run
async def test_fetch_all_and_topic_deletion_drops_its_offsets() -> None:
    store = OffsetStore()
    coordinator = GroupCoordinator(ManualClock(), offsets=store)
    coordinator.commit_offsets("g", {("t", 0): committed(1), ("u", 0): committed(2)})
    assert set(coordinator.fetch_offsets("g")) == {("t", 0), ("u", 0)}
    store.forget_topic("t")  # what the topic layer does when "t" is deleted
    assert set(coordinator.fetch_offsets("g")) == {("u", 0)}
    assert coordinator.fetch_offsets("unknown") == {}


@run
async def test_groups_known_only_by_stored_offsets_are_empty_groups() -> None:
    store = OffsetStore()
    store.commit("seeded", "t", 0, committed(7))
    coordinator = GroupCoordinator(ManualClock(), offsets=store)
    assert [(g.group_id, g.state) for g in coordinator.list_groups()] == [
        ("seeded", GroupState.EMPTY)
    ]
    assert coordinator.delete_groups(["seeded"]) == {"seeded": ErrorCode.none}
    assert store.of_group("seeded") == {}


@run
async def test_delete_groups() -> None:
    coordinator = GroupCoordinator(ManualClock())
    await stable_group(coordinator, 1, group="busy")
    coordinator.commit_offsets("idle", {("t", 0): committed(1)})
    assert coordinator.delete_groups(["busy", "idle", "ghost"]) == {
        "busy": ErrorCode.non_empty_group,
        "idle": ErrorCode.none,
        "ghost": ErrorCode.group_id_not_found,
    }
    assert coordinator.fetch_offsets("idle", [("t", 0)]) == {("t", 0): None}
    assert coordinator.describe_group("idle").state == GroupState.DEAD


@run
async def test_list_and_describe() -> None:
    coordinator = GroupCoordinator(ManualClock())
    a, b = await stable_group(coordinator, 2)
    coordinator.commit_offsets("simple", {("t", 0): committed(1)})
    listed = {(g.group_id, g.protocol_type, g.state) for g in coordinator.list_groups()}
    assert listed == {("g", "consumer", GroupState.STABLE), ("simple", "", GroupState.EMPTY)}
    assert [g.group_id for g in coordinator.list_groups(states=["empty"])] == ["simple"]
    assert [g.group_id for g in coordinator.list_groups(states=["Stable"])] == ["g"]

    described = coordinator.describe_group("g")
    assert (described.state, described.protocol_type, described.protocol_name) == (
        GroupState.STABLE,
        "consumer",
        "range",
    )
    assert {(m.member_id, m.assignment, m.metadata) for m in described.members} == {
        (a.member_id, a.member_id.encode(), b"sub"),
        (b.member_id, b.member_id.encode(), b"sub"),
    }


@run
async def test_shutdown_answers_waiting_members() -> None:
    coordinator = GroupCoordinator(ManualClock())
    await stable_group(coordinator, 1)
    waiting = start(coordinator.join_group(request(client="b")))
    await settle()
    coordinator.shutdown()
    await settle()
    assert waiting.result().error == ErrorCode.coordinator_not_available


def test_polled_clock_fires_when_its_source_jumps() -> None:
    now = [0]
    fired: list[int] = []

    async def body() -> None:
        clock = PolledClock(lambda: now[0], poll_ms=1)
        clock.call_at(1_000, lambda: fired.append(now[0]))
        cancelled = clock.call_at(1_000, lambda: fired.append(-1))
        cancelled.cancel()
        await asyncio.sleep(0.01)
        assert fired == []
        now[0] = 5_000
        await asyncio.sleep(0.01)
        clock.close()

    asyncio.run(body())
    assert fired == [5_000]


#: The polled clock's tick in the test below: an hour, so a timer fired within the
#: test's deadline cannot have waited for it.
TICK_MS = 3_600_000


def test_polled_clock_fires_a_short_timer_on_time_while_long_ones_are_pending() -> None:
    """Members' session timers keep the clock ticking every `poll_ms`; a timer due
    sooner than the next tick (a new group's join window) must not wait for it."""
    fired: list[int] = []

    async def body() -> None:
        clock = PolledClock(lambda: int(time.monotonic() * 1000), poll_ms=TICK_MS)
        clock.call_at(clock.now_ms() + 60_000, lambda: None)  # a session timeout
        await asyncio.sleep(0.01)  # the first tick ran; the next is an hour away
        clock.call_at(clock.now_ms() + 20, lambda: fired.append(1))
        # Waits for the timer, not for the tick (which would come after an hour): a
        # condition, with a deadline no loaded machine comes near; no time asserted.
        deadline = time.monotonic() + 60
        while not fired and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        clock.close()

    asyncio.run(body())
    assert fired == [1], "the short timer waited for the next tick"


def test_polled_clock_keeps_firing_after_a_timer_raises(caplog: pytest.LogCaptureFixture) -> None:
    now = [0]
    fired: list[str] = []

    def broken() -> None:
        raise KeyError("a group that is gone")

    async def body() -> None:
        clock = PolledClock(lambda: now[0], poll_ms=1)
        clock.call_at(1_000, broken)
        clock.call_at(1_000, lambda: fired.append("same tick"))
        clock.call_at(2_000, lambda: fired.append("later"))
        now[0] = 1_000
        await asyncio.sleep(0.01)
        now[0] = 2_000
        await asyncio.sleep(0.01)
        clock.close()

    with caplog.at_level("ERROR", logger="kafkatest.emulator"):
        asyncio.run(body())
    assert fired == ["same tick", "later"]
    assert [r.message for r in caplog.records] == [
        "a group coordinator timer failed; the other timers go on"
    ]


def test_manual_clock_fires_in_deadline_order() -> None:
    clock = ManualClock()
    fired: list[str] = []
    clock.call_at(20, lambda: fired.append("late"))
    clock.call_at(10, lambda: fired.append("early"))
    clock.advance(15)
    assert fired == ["early"]
    clock.advance(5)
    assert fired == ["early", "late"]
    assert clock.now_ms() == 20 and clock.pending_timers() == 0


@pytest.mark.parametrize("timeout_ms", [0, 1_800_001])
def test_session_timeout_out_of_range(timeout_ms: int) -> None:
    async def body() -> ErrorCode:
        coordinator = GroupCoordinator(ManualClock())
        bad = JoinRequest(**{**request().__dict__, "session_timeout_ms": timeout_ms})
        return (await coordinator.join_group(bad)).error

    assert asyncio.run(body()) == ErrorCode.invalid_session_timeout
