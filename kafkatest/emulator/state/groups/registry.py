"""Which classic groups exist, by id.

A group exists while it has members or committed offsets, so the registry looks at
the offset store as well as at its own dict. Joining, committing and the admin
requests all find groups through it, so that rule lives in one place.
"""

from __future__ import annotations

from kafkatest.emulator.state.groups.classic.membership import Group
from kafkatest.emulator.state.groups.offsets import OffsetStore


class GroupRegistry:
    """The classic groups of one coordinator; `groups` is shared with its `Rebalancer`."""

    def __init__(self, offsets: OffsetStore) -> None:
        self.offsets = offsets
        self.groups: dict[str, Group] = {}

    def lookup(self, group_id: str) -> Group | None:
        """Groups known only by committed offsets exist too, as Empty groups."""
        group = self.groups.get(group_id)
        if group is None and self.offsets.of_group(group_id):
            group = self.groups[group_id] = Group(group_id)
        return group

    def group_ids(self) -> list[str]:
        for group_id in self.offsets.groups():
            self.lookup(group_id)
        return list(self.groups)

    def create(self, group_id: str) -> Group:
        group = self.groups[group_id] = Group(group_id)
        return group
