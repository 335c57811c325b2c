"""One broker of three goes down and comes back: what clients see, on both backends.

Written down from Kafka 4.1 (three brokers, a dedicated controller) first: a
stopped broker leaves Metadata's broker list and every ISR; each partition it led
is led by the next in-sync replica in replica order; a partition whose only
replica it was has no leader (LEADER_NOT_AVAILABLE, empty ISR) until it returns;
on return it rejoins the ISR at the end, and leadership stays where it moved.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import pytest
from confluent_kafka import ElectionType, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from kafkatest import Broker
from kafkatest.errors import UnsupportedOperation
from kafkatest.faults import faults_for
from kafkatest.faults.validation import InvalidFault


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def partitions_of(broker: Broker, topic: str) -> dict[int, tuple[int, list[int], list[int], str]]:
    """partition -> (leader, replicas, isr, error name), from a fresh client."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    info = admin.list_topics(topic=topic, timeout=10).topics[topic]
    return {
        p: (m.leader, list(m.replicas), list(m.isrs), m.error.name() if m.error else "")
        for p, m in info.partitions.items()
    }


def values(broker: Broker, topic: str) -> list[str]:
    return [r.value.decode() for r in broker.consume(topic) if r.value is not None]


def eventually(check: Callable[[], bool], what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.2)


def produce(
    broker: Broker, topic: str, values: list[str], partition: int = 0
) -> list[KafkaError | None]:
    producer = Producer(
        {"bootstrap.servers": broker.bootstrap_servers, "acks": "all", "message.timeout.ms": 5000}
    )
    errors: list[KafkaError | None] = []
    for value in values:
        producer.produce(
            topic, value.encode(), partition=partition, on_delivery=lambda e, m: errors.append(e)
        )
    producer.flush(15)
    return errors


def test_replicas_are_spread_and_all_in_sync(cluster: Broker) -> None:
    topic = unique("spread")
    cluster.create_topic(topic, partitions=3, replication_factor=3)
    described = partitions_of(cluster, topic)
    leaders = sorted(leader for leader, *_ in described.values())
    assert leaders == [1, 2, 3], "each broker leads one of three partitions"
    for leader, replicas, isr, error in described.values():
        assert sorted(replicas) == [1, 2, 3] and replicas[0] == leader
        assert sorted(isr) == [1, 2, 3] and error == ""


def test_a_replication_factor_above_the_brokers_is_refused(cluster: Broker) -> None:
    with pytest.raises(Exception, match="replication factor of 4 cannot be reached"):
        cluster.create_topic(unique("too-many"), replication_factor=4)


def test_leadership_moves_to_an_in_sync_replica_when_its_broker_stops(cluster: Broker) -> None:
    faults = faults_for(cluster)
    topic = unique("failover")
    cluster.create_topic(topic, partitions=3, replication_factor=3)
    assert produce(cluster, topic, ["before"]) == [None]
    leader, replicas, _isr, _ = partitions_of(cluster, topic)[0]

    faults.stop_broker(leader)
    assert {"kind": "broker_stopped", "broker": leader} in faults.active()
    after = partitions_of(cluster, topic)
    new_leader, same_replicas, isr, error = after[0]
    assert same_replicas == replicas, "the assignment keeps the stopped broker"
    assert new_leader == next(r for r in replicas if r != leader), "next replica in order leads"
    assert leader not in isr and len(isr) == 2 and error == ""
    for partition in after.values():
        assert leader not in partition[2], "the stopped broker left every ISR"
    brokers = (
        AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        .list_topics(timeout=10)
        .brokers
    )
    assert sorted(brokers) == sorted(set([1, 2, 3]) - {leader})

    assert produce(cluster, topic, ["during"]) == [None]
    assert sorted(values(cluster, topic)) == ["before", "during"]

    faults.start_broker(leader)
    eventually(lambda: leader in partitions_of(cluster, topic)[0][2], "it rejoined the ISR")
    back = partitions_of(cluster, topic)[0]
    assert back[0] == new_leader, "leadership does not move back by itself"
    # Its leader adds it to a hash set of ids: the ISR comes back in id order (Kafka 4.3).
    assert back[2] == sorted(back[2]) == [1, 2, 3]

    # A preferred election (kafka-leader-election) gives it back to the first replica.
    election = cluster.admin().elect_leaders(ElectionType.PREFERRED, [TopicPartition(topic, 0)])
    assert list(election.result(timeout=30).values()) == [None]
    eventually(lambda: partitions_of(cluster, topic)[0][0] == leader, "the preferred replica leads")
    assert faults.active() == []


def test_a_partition_without_another_replica_goes_offline(cluster: Broker) -> None:
    faults = faults_for(cluster)
    topic = unique("single")
    cluster.create_topic(topic, partitions=3, replication_factor=1)
    assert produce(cluster, topic, ["kept"], partition=1) == [None]
    owner = partitions_of(cluster, topic)[1][0]

    faults.stop_broker(owner)
    leader, replicas, isr, error = partitions_of(cluster, topic)[1]
    assert (leader, replicas, isr, error) == (-1, [owner], [], "LEADER_NOT_AVAILABLE")

    faults.start_broker(owner)
    eventually(lambda: partitions_of(cluster, topic)[1][0] == owner, "its broker leads again")
    assert partitions_of(cluster, topic)[1][2] == [owner]
    assert values(cluster, topic) == ["kept"], "nothing was lost"


def test_acks_all_needs_min_insync_replicas(cluster: Broker) -> None:
    faults = faults_for(cluster)
    topic = unique("min-isr")
    cluster.create_topic(
        topic, partitions=1, replication_factor=2, config={"min.insync.replicas": 2}
    )
    leader, replicas, *_ = partitions_of(cluster, topic)[0]
    follower = next(r for r in replicas if r != leader)
    assert produce(cluster, topic, ["both in sync"]) == [None]

    faults.stop_broker(follower)
    errors = produce(cluster, topic, ["one in sync"])
    assert errors and errors[0] is not None
    assert errors[0].code() in (KafkaError.NOT_ENOUGH_REPLICAS, KafkaError._MSG_TIMED_OUT)
    acks_one = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": 1})
    acks_one.produce(topic, b"acks=1 still works")
    assert acks_one.flush(15) == 0

    faults.start_broker(follower)
    eventually(
        lambda: len(partitions_of(cluster, topic)[0][2]) == 2, "the follower is back in sync"
    )
    assert produce(cluster, topic, ["in sync again"]) == [None]
    assert sorted(values(cluster, topic)) == [
        "acks=1 still works",
        "both in sync",
        "in sync again",
    ]


def test_move_leader_elects_the_named_broker(cluster: Broker) -> None:
    faults = faults_for(cluster)
    topic = unique("moved")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    leader, replicas, *_ = partitions_of(cluster, topic)[0]
    target = next(r for r in replicas if r != leader)

    assert faults.move_leader(topic, 0, to_broker=target) == target
    moved_to, moved_replicas, isr, _ = partitions_of(cluster, topic)[0]
    assert moved_to == target and moved_replicas[0] == target, "it is the preferred replica now"
    assert sorted(moved_replicas) == sorted(replicas) and sorted(isr) == sorted(replicas)
    assert produce(cluster, topic, ["after the move"]) == [None]

    faults.clear()
    assert partitions_of(cluster, topic)[0][0] == leader, "clear() moved it back"


def test_cluster_faults_refuse_what_cannot_fire(cluster: Broker) -> None:
    faults = faults_for(cluster)
    with pytest.raises(InvalidFault, match="there is no broker 7; brokers are \\[1, 2, 3\\]"):
        faults.stop_broker(7)
    with pytest.raises(InvalidFault, match="broker_id must be an int"):
        faults.start_broker("2")  # type: ignore[arg-type]


def test_one_broker_refuses_cluster_faults(kafka_broker: Broker) -> None:
    with pytest.raises(UnsupportedOperation, match="needs a cluster of several brokers"):
        faults_for(kafka_broker).stop_broker(1)
