"""The settings a KIP-848 consumer group runs with: the broker's group.consumer.*
ones, replaced per group by the group's own configs.

Kafka reads a group's consumer.heartbeat.interval.ms and consumer.session.timeout.ms
(set with IncrementalAlterConfigs on ConfigResource GROUP, `state.group_configs`) at
each heartbeat, so a change applies from the member's next heartbeat; a group
without them uses the broker's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kafkatest.emulator.state.groups.consumer.assignors import ASSIGNORS


@dataclass(frozen=True)
class ConsumerGroupConfig:
    """Kafka's group.consumer.* broker settings."""

    heartbeat_interval_ms: int = 5000
    session_timeout_ms: int = 45000
    assignors: tuple[str, ...] = ASSIGNORS
    regex_refresh_interval_ms: int = 600_000


def _no_group_configs(_group_id: str) -> Mapping[str, str]:
    return {}


class GroupIntervals:
    """A group's heartbeat interval and session timeout, as its coordinator applies them."""

    def __init__(
        self,
        broker: ConsumerGroupConfig,
        group_configs: Callable[[str], Mapping[str, str]] = _no_group_configs,
    ) -> None:
        self._broker = broker
        self._group_configs = group_configs

    def heartbeat_interval_ms(self, group_id: str) -> int:
        """What the group's members are told to heartbeat at."""
        value = self._group_configs(group_id).get("consumer.heartbeat.interval.ms")
        return self._broker.heartbeat_interval_ms if value is None else int(value)

    def session_timeout_ms(self, group_id: str) -> int:
        """How long the coordinator keeps a member that does not heartbeat."""
        value = self._group_configs(group_id).get("consumer.session.timeout.ms")
        return self._broker.session_timeout_ms if value is None else int(value)
