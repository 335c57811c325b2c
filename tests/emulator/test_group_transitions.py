"""Each group protocol's states as a table the code follows (state/groups/)."""

from __future__ import annotations

import pytest

from kafkatest.emulator.state.groups.classic.membership import Group
from kafkatest.emulator.state.groups.classic.model import TRANSITIONS, GroupEvent, GroupState
from kafkatest.emulator.state.groups.consumer.model import STATE_RULES, ConsumerGroupState


def test_a_classic_group_moves_only_as_the_table_says() -> None:
    group = Group("g")
    for event, expected in (
        (GroupEvent.REBALANCE, GroupState.PREPARING_REBALANCE),
        (GroupEvent.JOINED, GroupState.COMPLETING_REBALANCE),
        (GroupEvent.ASSIGNED, GroupState.STABLE),
        (GroupEvent.REBALANCE, GroupState.PREPARING_REBALANCE),
        (GroupEvent.EMPTIED, GroupState.EMPTY),
        (GroupEvent.DELETED, GroupState.DEAD),
    ):
        assert group.on(event) is expected
    with pytest.raises(AssertionError, match="rebalance is not a transition out of Dead"):
        group.on(GroupEvent.REBALANCE)


def test_every_state_is_in_the_tables() -> None:
    assert set(TRANSITIONS) == set(GroupState)
    assert {state for table in TRANSITIONS.values() for state in table.values()} == set(GroupState)
    assert [state for state, _ in STATE_RULES] == [
        ConsumerGroupState.EMPTY,
        ConsumerGroupState.ASSIGNING,
        ConsumerGroupState.STABLE,
        ConsumerGroupState.RECONCILING,
    ]
