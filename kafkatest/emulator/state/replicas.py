"""Replication as clients see it: replica lists, the in-sync set, brokers going away.

The emulator keeps one log per partition, so every replica is always caught up;
what it models is what Kafka tells clients and what Kafka refuses. Held against a
3-broker Kafka 4.1 cluster: a broker's controlled shutdown takes it out of every
ISR and moves each partition it led to the first replica (in replica order) still
in sync, one leader epoch on; a partition with no such replica has no leader
(LEADER_NOT_AVAILABLE, an empty ISR) until a replica returns. A broker that comes
back rejoins the ISR, which its leader then lists in the order of a Scala hash set
of broker ids, ascending for the ids a test cluster has (Kafka 4.3; 4.1 appended it);
leadership does not move back by itself (Kafka's
preferred-leader check runs every 300 s). Produce with acks=all is refused with
NOT_ENOUGH_REPLICAS while the ISR is smaller than `min.insync.replicas`.
"""

from __future__ import annotations

from kafkatest.emulator.state.cluster import Cluster
from kafkatest.emulator.state.errors import (
    ElectionNotNeeded,
    EligibleLeadersNotAvailable,
    InvalidRequest,
    NotEnoughReplicas,
    PreferredLeaderNotAvailable,
)
from kafkatest.emulator.state.topics import Partition, Topic, TopicRegistry

NO_LEADER = -1


def stop_broker(cluster: Cluster, topics: TopicRegistry, broker_id: int) -> None:
    _check_known(cluster, broker_id)
    if broker_id in cluster.stopped:
        return
    if len(cluster.live_broker_ids) == 1:
        raise InvalidRequest(
            f"broker {broker_id} is the last one up; stop the whole broker instead"
        )
    cluster.stopped.add(broker_id)
    for topic in topics:
        for partition in topic.partitions:
            if broker_id in partition.isr:
                partition.isr.remove(broker_id)
            if partition.leader_id == broker_id:
                successor = next((r for r in partition.replicas if r in partition.isr), NO_LEADER)
                partition.elect(successor)


def start_broker(cluster: Cluster, topics: TopicRegistry, broker_id: int) -> None:
    _check_known(cluster, broker_id)
    if broker_id not in cluster.stopped:
        return
    cluster.stopped.discard(broker_id)
    for topic in topics:
        for partition in topic.partitions:
            if broker_id not in partition.replicas or broker_id in partition.isr:
                continue
            partition.isr = sorted([*partition.isr, broker_id])
            if partition.leader_id == NO_LEADER:
                # Kafka elects the last in-sync replica (its eligible leader) when it
                # returns; every emulated replica holds the whole log, so the first
                # to return is as good.
                partition.elect(broker_id)


def move_leader(cluster: Cluster, partition: Partition, leader_id: int) -> None:
    """Make `leader_id` the preferred replica and elect it (a reassignment that puts
    it first, then a preferred election, as kafkatest does on Kafka)."""
    _check_known(cluster, leader_id)
    if leader_id in cluster.stopped:
        raise InvalidRequest(f"broker {leader_id} is stopped; start it before it can lead")
    factor = len(partition.replicas)
    others = [r for r in partition.replicas if r != leader_id]
    partition.replicas = [leader_id, *others[: factor - 1]]
    in_sync = [r for r in partition.isr if r in partition.replicas and r != leader_id]
    partition.isr = [leader_id, *in_sync]
    if partition.leader_id != leader_id:
        partition.elect(leader_id)


def reassign(cluster: Cluster, partition: Partition, new_replicas: list[int]) -> None:
    """AlterPartitionReassignments: the replica set becomes `new_replicas` at once (an
    emulated replica is caught up the moment it exists). The leader stays if it is
    still a replica, else the first new replica that is up leads (an election)."""
    partition.replicas = list(new_replicas)
    kept = [r for r in partition.isr if r in new_replicas]
    added = [r for r in new_replicas if r not in kept and r not in cluster.stopped]
    partition.isr = kept + added
    if partition.leader_id not in new_replicas or partition.leader_id == NO_LEADER:
        partition.elect(next((r for r in new_replicas if r in partition.isr), NO_LEADER))


def elect(topic: str, partition: Partition, unclean: bool) -> None:
    """ElectLeaders: PREFERRED makes the first replica lead if it is in sync; UNCLEAN
    gives a leaderless partition a leader (never needed elsewhere). Kafka's errors."""
    name = f"{topic}-{partition.index}"
    if not unclean:
        preferred = partition.replicas[0]
        if partition.leader_id == preferred:
            raise ElectionNotNeeded("Leader election not needed for topic partition.")
        if preferred not in partition.isr:
            raise PreferredLeaderNotAvailable(
                f"Failed to elect leader for partition {name} under strategy "
                "PreferredReplicaPartitionLeaderElectionStrategy"
            )
        partition.elect(preferred)
        return
    if partition.leader_id != NO_LEADER:
        raise ElectionNotNeeded("Leader election not needed for topic partition.")
    raise EligibleLeadersNotAvailable(
        f"Failed to elect leader for partition {name} under strategy "
        "UncleanPartitionLeaderElectionStrategy"
    )


def check_enough_in_sync(topic: Topic, partition: Partition) -> None:
    """acks=all needs `min.insync.replicas` in sync (Kafka's Partition.appendRecordsToLeader),
    at most the partition's replicas: Kafka 4 caps it there (its `effectiveMinIsr`), so a
    topic of one replica takes acks=all whatever the setting."""
    needed = min(topic.int_config("min.insync.replicas"), len(partition.replicas))
    if len(partition.isr) < needed:
        raise NotEnoughReplicas(
            f"The size of the current ISR : {len(partition.isr)} is insufficient to satisfy "
            f"the min.isr requirement of {needed} for partition {topic.name}-{partition.index}"
        )


def _check_known(cluster: Cluster, broker_id: int) -> None:
    if broker_id not in cluster.broker_ids:
        raise InvalidRequest(f"there is no broker {broker_id}; brokers are {cluster.broker_ids}")
