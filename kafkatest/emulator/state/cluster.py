"""Which brokers exist, where they listen, and who leads what.

All emulated brokers share one state; each broker id only decides which
partitions it leads, so clients route requests as they would on a real cluster.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BrokerNode:
    node_id: int
    host: str
    port: int


class Cluster:
    def __init__(self, broker_count: int, first_id: int = 1) -> None:
        if broker_count < 1:
            raise ValueError("a cluster needs at least one broker")
        self.cluster_id = uuid.uuid4().hex[:22]
        self.broker_ids: list[int] = list(range(first_id, first_id + broker_count))
        self._addresses: dict[int, tuple[str, int]] = {}
        self._next_leader_start = 0

    def set_address(self, broker_id: int, host: str, port: int) -> None:
        self._addresses[broker_id] = (host, port)

    def address(self, broker_id: int) -> tuple[str, int]:
        return self._addresses[broker_id]

    @property
    def nodes(self) -> list[BrokerNode]:
        """Brokers with a known listener address, in id order."""
        return [
            BrokerNode(broker_id, *self._addresses[broker_id])
            for broker_id in self.broker_ids
            if broker_id in self._addresses
        ]

    @property
    def controller_id(self) -> int:
        """The first broker: clients send admin requests there."""
        return self.broker_ids[0]

    def next_leader_start(self) -> int:
        """Where a new topic's leaders start: each topic begins at the next broker,
        as Kafka's assignment does, so small topics do not all land on one broker."""
        start = self._next_leader_start
        self._next_leader_start = (start + 1) % len(self.broker_ids)
        return start

    def leader_of(self, leader_start: int, partition: int) -> int:
        """Partitions are spread round-robin over brokers from `leader_start`."""
        return self.broker_ids[(leader_start + partition) % len(self.broker_ids)]

    def coordinator_for(self, key: str) -> int:
        """The broker coordinating a group or transactional id (stable per key)."""
        return self.broker_ids[_java_string_hash(key) % len(self.broker_ids)]


def _java_string_hash(text: str) -> int:
    """Non-negative hash that does not change between runs (unlike hash())."""
    value = 0
    for char in text:
        value = (31 * value + ord(char)) & 0xFFFFFFFF
    return value & 0x7FFFFFFF
