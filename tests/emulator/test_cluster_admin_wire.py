"""Kafka 4.1's cluster administration APIs on every backend: AlterReplicaLogDirs,
UnregisterBroker (kafka-cluster), the KRaft voter changes (kafka-metadata-quorum
add/remove-controller) and delegation tokens on a PLAINTEXT listener
(UpdateFeatures: test_update_features_wire.py). Each expectation was first observed
on real Kafka 4.1.1; run with ``--kafka-backend=emulator,kafka``.

kraft.version cannot go back down, so its test starts a broker of its own.
"""

from __future__ import annotations

import base64
import datetime
import struct
import uuid
from typing import Any

import pytest
from admin_requests import FAILED, SAFE, UPGRADE, finalized_when, request_entity, update_features
from kio.schema.errors import ErrorCode
from kio.static.primitive import i8, i32
from raw_client import ask, connect, encode, read_frame, request_frame

from kafkatest import Broker, start_broker
from kafkatest.pytest_plugin import unique_topic_name

ALTER_REPLICA_LOG_DIRS, DESCRIBE_LOG_DIRS = 34, 35
UNREGISTER_BROKER, ADD_RAFT_VOTER, REMOVE_RAFT_VOTER, DESCRIBE_QUORUM = 64, 80, 81, 55
DESCRIBE_CLUSTER = 60


# -- AlterReplicaLogDirs -----------------------------------------------------------


def alter_replica_log_dirs(broker: Broker, path: str, topic: str, *partitions: int) -> Any:
    api = "alter_replica_log_dirs"
    topics = (
        request_entity(
            api, 2, "AlterReplicaLogDirTopic", name=topic, partitions=tuple(map(i32, partitions))
        ),
    )
    request = request_entity(
        api,
        2,
        "AlterReplicaLogDirsRequest",
        dirs=(request_entity(api, 2, "AlterReplicaLogDir", path=path, topics=topics),),
    )
    response = ask(broker.bootstrap_servers, ALTER_REPLICA_LOG_DIRS, 2, request)
    return {
        (t.topic_name, p.partition_index): p.error_code
        for t in response.results
        for p in t.partitions
    }


def test_moving_a_replica_within_its_one_log_dir(kafka_broker: Broker) -> None:
    topic = unique_topic_name("logdir")
    kafka_broker.create_topic(topic, partitions=1)
    try:
        request = request_entity("describe_log_dirs", 4, "DescribeLogDirsRequest", topics=None)
        [result] = ask(kafka_broker.bootstrap_servers, DESCRIBE_LOG_DIRS, 4, request).results
        here = result.log_dir

        assert alter_replica_log_dirs(kafka_broker, here, topic, 0, 5) == {
            (topic, 0): ErrorCode.none,
            (topic, 5): ErrorCode.unknown_topic_or_partition,
        }
        assert alter_replica_log_dirs(kafka_broker, "/elsewhere", topic, 0) == {
            (topic, 0): ErrorCode.log_dir_not_found
        }
        assert alter_replica_log_dirs(kafka_broker, here, "no-such-topic", 0) == {
            ("no-such-topic", 0): ErrorCode.unknown_topic_or_partition
        }
        # A replica's future directory name must fit in 255 bytes.
        long_name = "x" * 215
        assert alter_replica_log_dirs(kafka_broker, here, long_name, 0) == {
            (long_name, 0): ErrorCode.invalid_topic_exception
        }
    finally:
        kafka_broker.delete_topic(topic)


# -- UnregisterBroker, delegation tokens on PLAINTEXT ---------------------------------


def test_unregistering_an_unknown_broker_id(kafka_broker: Broker) -> None:
    request = request_entity("unregister_broker", 0, "UnregisterBrokerRequest", broker_id=i32(99))
    response = ask(kafka_broker.bootstrap_servers, UNREGISTER_BROKER, 0, request)
    assert (response.error_code, response.error_message) == (
        ErrorCode.broker_id_not_registered,
        "Broker ID 99 is not currently registered",
    )


def raw_answer(broker: Broker, api_key: int, version: int, request: Any) -> bytes:
    """The response body (after the correlation id and tag byte), for answers kio
    cannot decode (timestamps of -1)."""
    with connect(broker.bootstrap_servers) as sock:
        sock.sendall(request_frame(api_key, version, 7, encode(request)))
        reply = read_frame(sock)
    assert reply is not None and struct.unpack(">i", reply[:4])[0] == 7
    return reply[5:]


def _compact(text: str) -> bytes:
    return bytes([len(text) + 1]) + text.encode()


def test_a_plaintext_client_may_not_ask_for_delegation_tokens(kafka_broker: Broker) -> None:
    """Kafka refuses tokens to unauthenticated connections: error 64, the owner and
    requester ANONYMOUS, every timestamp -1 (broker-side refusal)."""
    no_time = b"\xff" * 8
    create = request_entity(
        "create_delegation_token",
        3,
        "CreateDelegationTokenRequest",
        owner_principal_type=None,
        owner_principal_name=None,
        renewers=(),
        max_lifetime=datetime.timedelta(milliseconds=-1),
    )
    assert raw_answer(kafka_broker, 38, 3, create) == (
        struct.pack(">h", ErrorCode.delegation_token_request_not_allowed.value)
        + (_compact("User") + _compact("ANONYMOUS")) * 2
        + no_time * 3
        + _compact("")  # token id
        + b"\x01"  # hmac: empty
        + b"\0\0\0\0\0"  # throttle, tags
    )
    renew = request_entity(
        "renew_delegation_token",
        2,
        "RenewDelegationTokenRequest",
        hmac=b"abc",
        renew_period=datetime.timedelta(seconds=1),
    )
    assert raw_answer(kafka_broker, 39, 2, renew) == b"\0\x40" + no_time + b"\0\0\0\0\0"
    describe = request_entity(
        "describe_delegation_token", 3, "DescribeDelegationTokenRequest", owners=None
    )
    answer = ask(kafka_broker.bootstrap_servers, 41, 3, describe)
    assert (answer.error_code, answer.tokens) == (
        ErrorCode.delegation_token_request_not_allowed,
        (),
    )


# -- KRaft voters --------------------------------------------------------------------


def cluster_id(broker: Broker) -> str:
    request = request_entity(
        "describe_cluster",
        2,
        "DescribeClusterRequest",
        include_cluster_authorized_operations=False,
        endpoint_type=i8(1),
        include_fenced_brokers=False,
    )
    return str(ask(broker.bootstrap_servers, DESCRIBE_CLUSTER, 2, request).cluster_id)


def add_voter(broker: Broker, voter_id: int, cluster: str | None = None) -> Any:
    listener = request_entity(
        "add_raft_voter", 0, "Listener", name="CONTROLLER", host="localhost", port=9
    )
    request = request_entity(
        "add_raft_voter",
        0,
        "AddRaftVoterRequest",
        cluster_id=cluster,
        timeout=datetime.timedelta(seconds=3),
        voter_id=i32(voter_id),
        voter_directory_id=uuid.UUID(int=1 << 64),
        listeners=(listener,),
    )
    return ask(broker.bootstrap_servers, ADD_RAFT_VOTER, 0, request)


def remove_voter(broker: Broker, voter_id: int, cluster: str | None = None) -> Any:
    request = request_entity(
        "remove_raft_voter",
        0,
        "RemoveRaftVoterRequest",
        cluster_id=cluster,
        voter_id=i32(voter_id),
        voter_directory_id=uuid.UUID(int=1 << 64),
    )
    return ask(broker.bootstrap_servers, REMOVE_RAFT_VOTER, 0, request)


def describe_quorum(broker: Broker, version: int = 2) -> Any:
    api = "describe_quorum"
    partition = request_entity(api, version, "PartitionData", partition_index=i32(0))
    topic = request_entity(
        api, version, "TopicData", topic_name="__cluster_metadata", partitions=(partition,)
    )
    request = request_entity(api, version, "DescribeQuorumRequest", topics=(topic,))
    return ask(broker.bootstrap_servers, DESCRIBE_QUORUM, version, request)


def quorum_voter(broker: Broker) -> Any:
    [voter] = describe_quorum(broker).topics[0].partitions[0].current_voters
    return voter


@pytest.mark.parametrize("version", [0, 1, 2])
def test_describe_quorum_answers_every_version(kafka_broker: Broker, version: int) -> None:
    """One voter, the controller, leading at epoch 1, at each version the broker serves
    (the controller's endpoints, `nodes`, exist from v2)."""
    response = describe_quorum(kafka_broker, version)
    assert response.error_code == ErrorCode.none
    [partition] = response.topics[0].partitions
    assert partition.error_code == ErrorCode.none
    assert [v.replica_id for v in partition.current_voters] == [partition.leader_id]
    if version >= 2:
        assert [n.node_id for n in response.nodes] == [partition.leader_id]


#: The new voter's directory id as Kafka prints it (Uuid.toString: base64url).
NEW_DIRECTORY = "AAAAAAAAAAEAAAAAAAAAAA"


def test_voters_cannot_change_while_kraft_version_is_0(kafka_broker: Broker) -> None:
    assert (add_voter(kafka_broker, 5).error_code, add_voter(kafka_broker, 5).error_message) == (
        ErrorCode.unsupported_version,
        "Cluster doesn't support adding voter because the kraft.version feature is 0",
    )
    removed = remove_voter(kafka_broker, 5)
    assert (removed.error_code, removed.error_message) == (
        ErrorCode.unsupported_version,
        "Cluster doesn't support removing voter because the kraft.version feature is 0",
    )
    real_id = cluster_id(kafka_broker)
    for answer in (add_voter(kafka_broker, 5, "nope"), remove_voter(kafka_broker, 5, "nope")):
        assert (answer.error_code, answer.error_message) == (
            ErrorCode.inconsistent_cluster_id,
            f'The given id "nope" doesn\'t match the cluster id "{real_id}"',
        )
    # A statically configured voter shows no directory id.
    assert quorum_voter(kafka_broker).replica_directory_id in (None, uuid.UUID(int=0))


def test_kraft_version_1_lets_voters_change_and_never_goes_back(kafka_broker: Broker) -> None:
    """On a broker of its own: kraft.version cannot be lowered again."""
    broker = start_broker(kafka_broker.backend)
    try:
        upgraded = update_features(broker, ("kraft.version", 1, UPGRADE))
        assert upgraded.error_code == ErrorCode.none
        finalized_when(broker, lambda levels: levels.get("kraft.version") == 1)
        voter = quorum_voter(broker)
        assert voter.replica_directory_id not in (None, uuid.UUID(int=0))
        directory = base64.urlsafe_b64encode(voter.replica_directory_id.bytes).decode().rstrip("=")
        voters = f"[ReplicaKey(id={voter.replica_id}, directoryId={directory})]"

        # Nothing answers at the new voter's endpoint.
        added = add_voter(broker, 5)
        assert (added.error_code, added.error_message) == (
            ErrorCode.request_timed_out,
            "Aborted add voter operation for since API_VERSIONS returned an error "
            "BROKER_NOT_AVAILABLE",
        )
        duplicate = add_voter(broker, voter.replica_id)
        assert (duplicate.error_code, duplicate.error_message) == (
            ErrorCode.duplicate_voter,
            f"The voter id for ReplicaKey(id={voter.replica_id}, directoryId={NEW_DIRECTORY}) "
            f"is already part of the set of voters {voters}.",
        )
        for voter_id in (5, voter.replica_id):
            removed = remove_voter(broker, voter_id)
            assert (removed.error_code, removed.error_message) == (
                ErrorCode.voter_not_found,
                f"Cannot remove voter ReplicaKey(id={voter_id}, directoryId={NEW_DIRECTORY}) "
                f"from the set of voters {voters}",
            )
        down = update_features(broker, ("kraft.version", 0, SAFE))
        assert down.error_message == FAILED + (
            "Invalid update version 0 for feature kraft.version. "
            "Can't downgrade the version of this feature."
        )
    finally:
        broker.close()
