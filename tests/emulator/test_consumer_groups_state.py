"""The KIP-848 coordinator's rules without the wire: assignors, reconciliation, timers.

The wire and client tests (test_consumer_groups_wire.py, conformance) hold these
against real Kafka; here the same rules run on a manual clock, so session and
revocation timeouts fire at once and assignor edge cases are cheap to enumerate.
"""

from __future__ import annotations

import uuid

import pytest
from kio.schema.errors import ErrorCode

from kafkatest.emulator.state.groups.clock import ManualClock
from kafkatest.emulator.state.groups.consumer.assignors import AssignorMember, assign
from kafkatest.emulator.state.groups.consumer.coordinator import ConsumerGroupCoordinator
from kafkatest.emulator.state.groups.consumer.model import (
    ConsumerGroup,
    ConsumerGroupState,
    HeartbeatError,
    HeartbeatRequest,
)
from kafkatest.emulator.state.groups.consumer.regex import compile_regex, validate_regex
from kafkatest.emulator.state.groups.consumer.settings import ConsumerGroupConfig
from kafkatest.emulator.state.topics import TopicRegistry

T1, T2 = uuid.UUID(int=1), uuid.UUID(int=2)


def member(member_id: str, topics=(T1,), target=None, instance_id=None) -> AssignorMember:
    return AssignorMember(member_id, instance_id, frozenset(topics), target or {})


def test_range_gives_consecutive_ranges_static_members_first() -> None:
    members = [member("b"), member("a"), member("z", instance_id="static")]
    result = assign("range", members, {T1: 7}, [T1])
    assert result == {
        "z": {T1: frozenset({0, 1, 2})},
        "a": {T1: frozenset({3, 4})},
        "b": {T1: frozenset({5, 6})},
    }


def test_uniform_keeps_what_each_member_has_up_to_its_quota() -> None:
    held = {T1: frozenset({0, 1, 2, 3})}
    result = assign("uniform", [member("a", target=held), member("b")], {T1: 4}, [T1])
    assert result == {"a": {T1: frozenset({0, 1})}, "b": {T1: frozenset({2, 3})}}
    # An uneven count: one member gets one more, nobody loses what it may keep.
    three = [member("a", target=result["a"]), member("b", target=result["b"]), member("c")]
    spread = assign("uniform", three, {T1: 5}, [T1])
    assert sorted(len(a.get(T1, ())) for a in spread.values()) == [1, 2, 2]
    assert spread["a"][T1] <= result["a"][T1] | {4}


def test_uniform_with_different_subscriptions_assigns_each_partition_once() -> None:
    members = [member("a", topics=(T1,)), member("b", topics=(T1, T2))]
    result = assign("uniform", members, {T1: 2, T2: 3}, [T1, T2])
    assert result["a"] == {T1: frozenset({0})}
    assert result["b"] == {T1: frozenset({1}), T2: frozenset({0, 1, 2})}


@pytest.mark.parametrize(
    ("regex", "description"),
    [
        # RE2J 1.8's descriptions (Kafka 4.1's regex engine), as java prints them.
        ("(?<=x)y", "invalid named capture"),
        ("(?!x)", "invalid or unsupported Perl syntax"),
        (r"(a)\1", "invalid escape sequence"),
        ("a++", "invalid nested repetition operator"),
        ("[unclosed", "missing closing ]"),
        ("(abc", "missing closing )"),
        ("abc)", "regexp/syntax: internal error"),
        ("*a", "missing argument to repetition operator"),
        ("a{2,1}", "invalid repeat count"),
        ("[z-a]", "invalid character class range"),
        ("\\", "trailing backslash at end of expression"),
        ("(?P<n>a)(?P<n>b)", "duplicate capture group name"),
        ("(?P<>a)", "invalid named capture"),
    ],
)
def test_regexes_re2j_cannot_compile_are_refused_in_its_words(regex: str, description: str) -> None:
    with pytest.raises(HeartbeatError) as refused:
        validate_regex(regex)
    assert refused.value.error == ErrorCode.invalid_regular_expression
    assert refused.value.message == (
        f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {description}."
    )


def test_regexes_match_whole_names_in_linear_time() -> None:
    validate_regex(r"^orders-(eu|us)\.[a-z]+$")
    assert compile_regex(r"orders-\w+").fullmatch("orders-eu")
    assert not compile_regex("orders").fullmatch("orders-eu")
    # Exponential for a backtracking engine; RE2 answers at once.
    assert compile_regex("(a+)+b").fullmatch("a" * 5000) is None


def coordinator(clock: ManualClock, *topics: tuple[str, int]) -> ConsumerGroupCoordinator:
    registry = TopicRegistry()
    for name, partitions in topics:
        registry.create(name, partitions, [[1]] * partitions, {})
    config = ConsumerGroupConfig(heartbeat_interval_ms=500, session_timeout_ms=10_000)
    return ConsumerGroupCoordinator(clock, registry, config)


def join(c: ConsumerGroupCoordinator, group: ConsumerGroup, member_id: str, **fields) -> int:
    request = HeartbeatRequest(
        group_id=group.group_id,
        member_id=member_id,
        member_epoch=0,
        rebalance_timeout_ms=fields.pop("rebalance_timeout_ms", 60_000),
        subscribed_topic_names=("t",),
        owned={},
        **fields,
    )
    result = c.heartbeat(request, group)
    assert result.error == ErrorCode.none
    return result.member_epoch


def beat(c, group, member_id, epoch, owned=None):
    return c.heartbeat(HeartbeatRequest(group.group_id, member_id, epoch, owned=owned), group)


def test_a_silent_member_is_removed_when_its_session_ends() -> None:
    clock = ManualClock(start_ms=1_000)
    c = coordinator(clock, ("t", 2))
    group = ConsumerGroup("g")
    join(c, group, "a")
    clock.advance(9_000)
    beat(c, group, "a", 2)  # heartbeats move the deadline (a group starts at epoch 1)
    clock.advance(9_000)
    assert "a" in group.members
    clock.advance(1_001)
    assert group.members == {}
    assert (group.state, group.group_epoch) == (ConsumerGroupState.EMPTY, 3)


def test_a_member_that_does_not_revoke_in_time_is_fenced() -> None:
    clock = ManualClock(start_ms=1_000)
    c = coordinator(clock, ("t", 2))
    group = ConsumerGroup("g")
    join(c, group, "a", rebalance_timeout_ms=3_000)
    join(c, group, "b")
    t1 = next(iter(group.members["a"].assigned))
    revoking = beat(c, group, "a", 2, owned={t1: frozenset({0, 1})})
    assert (revoking.member_epoch, revoking.assignment) == (2, {t1: frozenset({0})})
    for _ in range(3):  # heartbeats do not extend the revocation deadline
        clock.advance(900)
        beat(c, group, "a", 2, owned={t1: frozenset({0, 1})})
    assert "a" in group.members
    clock.advance(300)
    assert "a" not in group.members
    granted = beat(c, group, "b", 3)
    assert granted.assignment is not None and granted.assignment[t1] == frozenset({0, 1})
