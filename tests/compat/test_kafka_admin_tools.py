"""Kafka's admin tools for one broker's logs, leaders, reassignments, quorum and
features, on every backend (run with ``--kafka-backend=emulator,kafka``), and the
AlterPartitionReassignments / ElectLeaders answers to bad requests.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from kio.schema.alter_partition_reassignments.v1.request import (
    AlterPartitionReassignmentsRequest,
    ReassignablePartition,
    ReassignableTopic,
)
from kio.schema.errors import ErrorCode
from kio.static.primitive import i32

from kafkatest import Broker, Record
from kafkatest.apps.tools import run_kafka_tool
from kafkatest.brokers.client_waits import wait_until
from kafkatest.pytest_plugin import unique_topic_name
from tests.emulator.raw_client import ask

LOG_DIRS = "org.apache.kafka.tools.LogDirsCommand"
LEADER_ELECTION = "org.apache.kafka.tools.LeaderElectionCommand"
REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
METADATA_QUORUM = "org.apache.kafka.tools.MetadataQuorumCommand"
FEATURES = "org.apache.kafka.tools.FeatureCommand"
_LOGGED_PROBLEM = re.compile(r"^(WARN|ERROR) ", re.MULTILINE)


def tool(broker: Broker, main_class: str, *args: str, ok: bool = True) -> Any:
    result = run_kafka_tool(
        main_class, ["--bootstrap-server", broker.bootstrap_servers, *args], timeout_s=90
    )
    if ok:
        report = f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        assert result.returncode == 0, report
        assert not _LOGGED_PROBLEM.search(result.stderr), report
    return result


@pytest.fixture
def topic(kafka_broker: Broker) -> Iterator[str]:
    name = unique_topic_name("admin-tools")
    kafka_broker.create_topic(name, partitions=2)
    try:
        yield name
    finally:
        kafka_broker.delete_topic(name)


def node_id(broker: Broker) -> int:
    [node] = broker.admin().list_topics(timeout=10).brokers
    return int(node)


def test_kafka_log_dirs_describes_partition_sizes(kafka_broker: Broker, topic: str) -> None:
    kafka_broker.produce([Record(topic=topic, partition=0, value=b"x" * 100)])
    out = tool(kafka_broker, LOG_DIRS, "--describe", "--topic-list", topic).stdout
    *_, last = out.splitlines()
    described = json.loads(last)
    [entry] = described["brokers"]
    assert entry["broker"] == node_id(kafka_broker)
    [log_dir] = entry["logDirs"]
    assert log_dir["error"] is None and log_dir["logDir"].startswith("/")
    # One uncompressed 100-byte record with key=None is a 170-byte batch on disk.
    sizes = [
        (p["partition"], p["size"], p["offsetLag"], p["isFuture"]) for p in log_dir["partitions"]
    ]
    assert sorted(sizes) == [(f"{topic}-0", 170, 0, False), (f"{topic}-1", 0, 0, False)]


def test_kafka_leader_election_finds_nothing_to_elect(kafka_broker: Broker, topic: str) -> None:
    for election in ("preferred", "unclean"):
        out = tool(
            kafka_broker, LEADER_ELECTION, "--election-type", election,
            "--topic", topic, "--partition", "1",
        ).stdout  # fmt: skip
        assert out.strip() == f"Valid replica already elected for partitions {topic}-1"
    everything = tool(
        kafka_broker, LEADER_ELECTION, "--election-type", "preferred", "--all-topic-partitions"
    )
    assert everything.stdout.strip() == ""

    missing = unique_topic_name("no-such")
    failed = tool(
        kafka_broker, LEADER_ELECTION, "--election-type", "preferred",
        "--topic", missing, "--partition", "0", ok=False,
    )  # fmt: skip
    assert failed.returncode == 1
    beyond = tool(
        kafka_broker, LEADER_ELECTION, "--election-type", "preferred",
        "--topic", topic, "--partition", "5", ok=False,
    )  # fmt: skip
    assert (
        f"Error completing leader election (PREFERRED) for partition: {topic}-5: "
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
        f"No such partition as {topic}-5"
    ) in beyond.stdout
    assert (
        f"Error completing leader election (PREFERRED) for partition: {missing}-0: "
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
        f"No such topic as {missing}"
    ) in failed.stdout


def test_kafka_reassign_partitions_lists_none_in_progress(kafka_broker: Broker) -> None:
    out = tool(kafka_broker, REASSIGN, "--list").stdout
    assert out.strip() == "No partition reassignments found."


def test_kafka_metadata_quorum_shows_the_single_controller(kafka_broker: Broker) -> None:
    node = node_id(kafka_broker)
    status = tool(kafka_broker, METADATA_QUORUM, "describe", "--status").stdout
    fields = dict(
        (key.strip(), value.strip())
        for key, value in (line.split(":", 1) for line in status.splitlines() if ":" in line)
    )
    assert fields["LeaderId"] == str(node) and fields["LeaderEpoch"] == "1"
    assert int(fields["HighWatermark"]) > 0
    assert (fields["MaxFollowerLag"], fields["MaxFollowerLagTimeMs"]) == ("0", "0")
    [voter] = json.loads(fields["CurrentVoters"])
    assert voter["id"] == node and voter["endpoints"][0].startswith("CONTROLLER://127.0.0.1:")
    assert fields["CurrentObservers"] == "[]"
    assert (
        fields["ClusterId"] == kafka_broker.admin().describe_cluster().result(timeout=10).cluster_id
    )

    replication = tool(kafka_broker, METADATA_QUORUM, "describe", "--replication").stdout
    header, row = [line.split() for line in replication.strip().splitlines()]
    assert header == [
        "NodeId", "DirectoryId", "LogEndOffset", "Lag",
        "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status",
    ]  # fmt: skip
    assert (row[0], row[1], row[3], row[6]) == (str(node), "AAAAAAAAAAAAAAAAAAAAAA", "0", "Leader")


def test_kafka_features_describes_kafkas_levels(kafka_broker: Broker) -> None:
    """Kafka 4.3.1's levels, share and streams groups off as the `kafka` backend formats
    it (the tool pads its columns with spaces from 4.3, with tabs before)."""
    out = tool(kafka_broker, FEATURES, "describe").stdout
    rows = [dict(re.findall(r"(\w+): (\S+)", line)) for line in out.strip().splitlines()]
    assert [
        (
            row["Feature"],
            row["SupportedMinVersion"],
            row["SupportedMaxVersion"],
            row["FinalizedVersionLevel"],
        )
        for row in rows
    ] == [
        ("eligible.leader.replicas.version", "0", "1", "1"),
        ("group.version", "0", "1", "1"),
        ("kraft.version", "0", "1", "0"),
        ("metadata.version", "3.3-IV3", "4.3-IV0", "4.3-IV0"),
        ("share.version", "0", "1", "0"),
        ("streams.version", "0", "1", "0"),
        ("transaction.version", "0", "2", "2"),
    ]
    assert len({row["Epoch"] for row in rows}) == 1


def reassign(broker: Broker, topic: str, partition: int, replicas: list[int] | None) -> Any:
    request = AlterPartitionReassignmentsRequest(
        timeout=datetime.timedelta(seconds=30),
        allow_replication_factor_change=True,
        topics=(
            ReassignableTopic(
                name=topic,
                partitions=(
                    ReassignablePartition(
                        partition_index=i32(partition),
                        replicas=None if replicas is None else tuple(i32(r) for r in replicas),
                    ),
                ),
            ),
        ),
    )
    response = ask(broker.bootstrap_servers, 45, 1, request)
    assert response.error_code == ErrorCode.none
    [answer] = response.responses
    [partition_answer] = answer.partitions
    return partition_answer.error_code, partition_answer.error_message


def test_partition_reassignments_answer_as_kafka_does(kafka_broker: Broker, topic: str) -> None:
    node = node_id(kafka_broker)
    assert reassign(kafka_broker, topic, 0, [node]) == (ErrorCode.none, None)
    assert reassign(kafka_broker, topic, 0, [node + 98]) == (
        ErrorCode.invalid_replica_assignment,
        f"The manual partition assignment includes broker {node + 98}, but no such broker "
        "is registered.",
    )
    assert reassign(kafka_broker, topic, 0, None) == (ErrorCode.no_reassignment_in_progress, None)
    assert reassign(kafka_broker, topic, 5, [node]) == (
        ErrorCode.unknown_topic_or_partition,
        f"Unable to find partition {topic}:5.",
    )
    missing = unique_topic_name("no-such")
    assert reassign(kafka_broker, missing, 0, [node]) == (
        ErrorCode.unknown_topic_or_partition,
        f"Unable to find a topic named {missing}.",
    )
    assert tool(kafka_broker, REASSIGN, "--list").stdout.strip() == (
        "No partition reassignments found."
    )


def test_create_partitions_refuses_bad_manual_assignments(kafka_broker: Broker, topic: str) -> None:
    from confluent_kafka.admin import NewPartitions

    node = node_id(kafka_broker)
    admin = kafka_broker.admin()

    def grow(total: int, assignment: list[list[int]]) -> str:
        future = admin.create_partitions([NewPartitions(topic, total, assignment)])[topic]
        try:
            future.result(timeout=30)
        except Exception as exc:  # KafkaException carrying Kafka's error
            error = exc.args[0]
            return f"{error.name()}: {error.str()}"
        return "ok"

    assert grow(3, [[node + 98]]) == (
        f"INVALID_REPLICA_ASSIGNMENT: The manual partition assignment includes broker "
        f"{node + 98}, but no such broker is registered."
    )
    assert grow(4, [[node]]) == (
        "INVALID_REPLICA_ASSIGNMENT: Attempted to add 2 additional partition(s), but only 1 "
        "assignment(s) were specified."
    )
    assert grow(3, [[node, node]]) == (
        f"INVALID_REPLICA_ASSIGNMENT: The manual partition assignment includes the broker "
        f"{node} more than once."
    )
    assert grow(3, [[node]]) == "ok"
    # Kafka answers once its controller has committed the change; the broker's metadata
    # (which partition_count reads) follows a moment later on a busy machine.
    wait_until(lambda: kafka_broker.partition_count(topic) == 3, 30, "the topic has 3 partitions")
