"""Replica assignments by hand (CreateTopics, CreatePartitions, reassignments) on a
three-broker cluster, both backends: accepted where they name registered brokers
consistently, refused in Kafka's controller's words otherwise."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from kafkatest import Broker


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def created(broker: Broker, topic: str, assignment: list[list[int]]) -> None:
    """CreateTopics with replicas by hand (librdkafka sends -1 partitions and factor)."""
    new = NewTopic(topic, num_partitions=len(assignment), replica_assignment=assignment)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    admin.create_topics([new], operation_timeout=30)[topic].result(30)


def replicas(broker: Broker, topic: str) -> dict[int, list[int]]:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    info = admin.list_topics(topic=topic, timeout=10).topics[topic]
    return {p: list(m.replicas) for p, m in sorted(info.partitions.items())}


def test_a_manual_assignment_places_the_replicas(cluster: Broker) -> None:
    topic = unique("by-hand")
    created(cluster, topic, [[3, 1], [1, 2], [2, 3]])
    assert replicas(cluster, topic) == {0: [3, 1], 1: [1, 2], 2: [2, 3]}

    cluster.admin().create_partitions([NewPartitions(topic, 4, [[3, 2]])])[topic].result(30)
    deadline = time.monotonic() + 30
    while len(replicas(cluster, topic)) < 4:  # Kafka's brokers learn of it a moment later
        assert time.monotonic() < deadline, "the new partition never appeared"
        time.sleep(0.1)
    assert replicas(cluster, topic)[3] == [3, 2]


@pytest.mark.parametrize(
    ("assignment", "error", "says"),
    [
        (
            [[1], [7]],
            "INVALID_REPLICA_ASSIGNMENT",
            "includes broker 7, but no such broker is registered",
        ),
        ([[1, 2], [2]], "INVALID_REPLICA_ASSIGNMENT", "not consistent with previous partitions"),
        ([[1, 1]], "INVALID_REPLICA_ASSIGNMENT", "includes the broker 1 more than once"),
    ],
)
def test_a_bad_manual_assignment_is_refused(
    cluster: Broker, assignment: list[list[int]], error: str, says: str
) -> None:
    topic = unique("refused")
    with pytest.raises(KafkaException) as refused:
        created(cluster, topic, assignment)
    assert refused.value.args[0].name() == error
    assert says in refused.value.args[0].str()
    assert topic not in cluster.list_topics()
