"""Which brokers exist, which are up, where they listen, and who leads what.

All emulated brokers share one state; each broker id only decides which
partitions it leads, so clients route requests as they would on a real cluster.
A stopped broker (a fault) is still a replica of its partitions but is not
registered: Metadata leaves it out and no partition or coordinator lands on it.

A broker may listen on more than one listener (with ACLs, kafkatest's own clients
log in on a listener of their own); as on Kafka, a request is answered with the
addresses of the listener it came in on, so a client never leaves its listener.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

#: The listener the brokers' bootstrap servers name, that every client is given.
CLIENT_LISTENER = "CLIENT"


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
        #: The controller's metadata log directory id (KIP-853), shown once kraft.version is 1.
        self.controller_directory_id = uuid.uuid4()
        self.broker_ids: list[int] = list(range(first_id, first_id + broker_count))
        #: Address per broker id, per listener name.
        self._addresses: dict[str, dict[int, tuple[str, int]]] = {}
        self._next_leader_start = 0
        #: Brokers taken down one at a time (`replicas.stop_broker`).
        self.stopped: set[int] = set()

    @property
    def live_broker_ids(self) -> list[int]:
        return [b for b in self.broker_ids if b not in self.stopped]

    def set_address(
        self, broker_id: int, host: str, port: int, listener: str = CLIENT_LISTENER
    ) -> None:
        self._addresses.setdefault(listener, {})[broker_id] = (host, port)

    def address(self, broker_id: int, listener: str = CLIENT_LISTENER) -> tuple[str, int]:
        return self._addresses[listener][broker_id]

    @property
    def nodes(self) -> list[BrokerNode]:
        """Registered brokers (up, with a known listener address), in id order."""
        return self.listener_nodes(CLIENT_LISTENER)

    def listener_nodes(self, listener: str) -> list[BrokerNode]:
        """The registered brokers as a client of `listener` reaches them: Kafka leaves
        out a broker without that listener rather than give another listener's address."""
        addresses = self._addresses.get(listener, {})
        return [
            BrokerNode(broker_id, *addresses[broker_id])
            for broker_id in self.live_broker_ids
            if broker_id in addresses
        ]

    @property
    def controller_id(self) -> int:
        """The first broker that is up: clients send admin requests there."""
        live = self.live_broker_ids
        return live[0] if live else self.broker_ids[0]

    def next_leader_start(self) -> int:
        """Where a new topic's leaders start: each topic begins at the next broker,
        as Kafka's assignment does, so small topics do not all land on one broker."""
        start = self._next_leader_start
        self._next_leader_start = (start + 1) % len(self.broker_ids)
        return start

    def replicas_of(self, leader_start: int, partition: int, replication_factor: int) -> list[int]:
        """Partitions are spread round-robin over the brokers that are up, from
        `leader_start`; each replica list continues with the brokers after its leader
        (Kafka 4.1 placed [1, 2, 3], [2, 3, 1], [3, 1, 2] for three partitions)."""
        live = self.live_broker_ids or self.broker_ids
        first = leader_start + partition
        return [live[(first + i) % len(live)] for i in range(replication_factor)]

    def coordinator_for(self, key: str) -> int:
        """The broker coordinating a transactional id (stable per key): the one its
        hash names, or while that one is down the next broker that is up."""
        start = _java_string_hash(key) % len(self.broker_ids)
        ordered = self.broker_ids[start:] + self.broker_ids[:start]
        return next((b for b in ordered if b not in self.stopped), ordered[0])


def _java_string_hash(text: str) -> int:
    """Non-negative hash that does not change between runs (unlike hash())."""
    value = 0
    for char in text:
        value = (31 * value + ord(char)) & 0xFFFFFFFF
    return value & 0x7FFFFFFF
