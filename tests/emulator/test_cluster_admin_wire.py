"""Kafka 4.1's cluster administration APIs on every backend: UpdateFeatures
(kafka-features), AlterReplicaLogDirs, UnregisterBroker (kafka-cluster), the KRaft
voter changes (kafka-metadata-quorum add/remove-controller) and delegation tokens
on a PLAINTEXT listener. Each expectation was first observed on real Kafka 4.1.1;
run with ``--kafka-backend=emulator,kafka``.

The session's broker is shared, so a test that changes a feature level puts it
back; kraft.version cannot go back down, so its test starts a broker of its own.
"""

from __future__ import annotations

import datetime
import struct
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kio.schema.api_versions.v4.request import ApiVersionsRequest
from kio.schema.errors import ErrorCode
from kio.static.primitive import i8, i16, i32
from raw_client import ask, connect, encode, read_frame, request_frame

from kafkatest import Broker, start_broker
from kafkatest.pytest_plugin import unique_topic_name

UPDATE_FEATURES, ALTER_REPLICA_LOG_DIRS, DESCRIBE_LOG_DIRS = 57, 34, 35
UNREGISTER_BROKER, ADD_RAFT_VOTER, REMOVE_RAFT_VOTER, DESCRIBE_QUORUM = 64, 80, 81, 55
CONSUMER_GROUP_HEARTBEAT, CONSUMER_GROUP_DESCRIBE, DESCRIBE_CLUSTER = 68, 69, 60
UPGRADE, SAFE, UNSAFE = 1, 2, 3
FAILED = "The update failed for all features since the following feature had an error: "


def _request(api: str, version: int, entity: str, **fields: Any) -> Any:
    import importlib

    module = importlib.import_module(f"kio.schema.{api}.v{version}.request")
    return getattr(module, entity)(**fields)


def update_features(
    broker: Broker, *updates: tuple[str, int, int], validate_only: bool = False, version: int = 2
) -> Any:
    keys = tuple(
        _request(
            "update_features",
            version,
            "FeatureUpdateKey",
            feature=feature,
            max_version_level=i16(level),
            upgrade_type=i8(kind),
        )
        for feature, level, kind in updates
    )
    request = _request(
        "update_features",
        version,
        "UpdateFeaturesRequest",
        feature_updates=keys,
        validate_only=validate_only,
    )
    return ask(broker.bootstrap_servers, UPDATE_FEATURES, version, request)


def finalized(broker: Broker) -> tuple[dict[str, int], int]:
    request = ApiVersionsRequest(client_software_name="kafkatest", client_software_version="1")
    response = ask(broker.bootstrap_servers, 18, 4, request)
    levels = {f.name: f.max_version_level for f in response.finalized_features}
    return levels, response.finalized_features_epoch


# -- UpdateFeatures ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("updates", "refusal"),
    [
        ([], None),
        ([("group.version", 1, UPGRADE)], None),
        ([("group.version", 0, SAFE)], None),
        ([("group.version", 0, UNSAFE)], None),
        ([("transaction.version", 1, SAFE)], None),
        ([("metadata.version", 24, SAFE)], None),
        ([("metadata.version", 26, UNSAFE)], None),
        ([("group.version", 1, UPGRADE), ("group.version", 1, UPGRADE)], None),
        (
            [("nope.version", 1, UPGRADE)],
            "Invalid update version 1 for feature nope.version. "
            "Local controller 1 does not support this feature.",
        ),
        (
            [("group.version", 5, UPGRADE)],
            "Invalid update version 5 for feature group.version. "
            "Local controller 1 only supports versions 0-1",
        ),
        (
            [("group.version", 0, UPGRADE)],
            "Invalid update version 0 for feature group.version. Can't downgrade the version "
            "of this feature without setting the upgrade type to either safe or unsafe downgrade.",
        ),
        (
            [("group.version", -1, SAFE)],
            "Invalid update version -1 for feature group.version. "
            "A feature version cannot be less than 0.",
        ),
        (
            [("group.version", 1, 7)],
            "Invalid update version 1 for feature group.version. "
            "The controller does not support the given upgrade type.",
        ),
        (
            [("metadata.version", 6, UNSAFE)],
            "Invalid update version 6 for feature metadata.version. "
            "Local controller 1 only supports versions 7-27",
        ),
        (
            [("metadata.version", 22, SAFE)],
            "Invalid metadata.version 22. Refusing to perform the requested downgrade "
            "because it might delete metadata information.",
        ),
        (
            [("metadata.version", 7, UNSAFE)],
            "Invalid metadata.version 7. Unsafe metadata downgrade is not supported in this "
            "version.",
        ),
        # One bad update fails them all.
        (
            [("group.version", 0, SAFE), ("nope", 1, UPGRADE)],
            "Invalid update version 1 for feature nope. "
            "Local controller 1 does not support this feature.",
        ),
    ],
)
def test_update_features_validates_as_kafkas_controller(
    kafka_broker: Broker, updates: list[tuple[str, int, int]], refusal: str | None
) -> None:
    before = finalized(kafka_broker)[0]
    response = update_features(kafka_broker, *updates, validate_only=True)
    if refusal is None:
        assert (response.error_code, response.error_message) == (ErrorCode.none, None)
    else:
        assert response.error_code == ErrorCode.invalid_update_version
        assert response.error_message == FAILED + refusal
    assert finalized(kafka_broker)[0] == before  # validate_only changes nothing


@pytest.fixture
def restore_features(kafka_broker: Broker) -> Iterator[None]:
    """Puts the shared broker's feature levels back however the test ends."""
    before = finalized(kafka_broker)[0]
    yield
    now = finalized(kafka_broker)[0]
    changes = [
        (name, level, UPGRADE if level > now.get(name, 0) else SAFE)
        for name, level in before.items()
        if now.get(name, 0) != level
    ]
    changes += [(name, 0, SAFE) for name in now if name not in before]
    if changes:
        assert update_features(kafka_broker, *changes).error_code == ErrorCode.none


def consumer_group_heartbeat(broker: Broker) -> Any:
    request = _request(
        "consumer_group_heartbeat",
        1,
        "ConsumerGroupHeartbeatRequest",
        group_id=unique_topic_name("gv"),
        member_id=str(uuid.uuid4()),
        member_epoch=i32(0),
        instance_id=None,
        rack_id=None,
        rebalance_timeout=datetime.timedelta(seconds=30),
        subscribed_topic_names=("t",),
        subscribed_topic_regex=None,
        server_assignor=None,
        topic_partitions=(),
    )
    return ask(broker.bootstrap_servers, CONSUMER_GROUP_HEARTBEAT, 1, request)


@pytest.mark.usefixtures("restore_features")
def test_group_version_0_turns_kip_848_groups_off_and_1_back_on(kafka_broker: Broker) -> None:
    levels, epoch = finalized(kafka_broker)
    assert levels["group.version"] == 1

    assert update_features(kafka_broker, ("group.version", 0, SAFE)).error_code == ErrorCode.none

    levels_off, epoch_off = finalized(kafka_broker)
    assert "group.version" not in levels_off  # level 0 is left out
    assert epoch_off > epoch
    off = consumer_group_heartbeat(kafka_broker)
    assert (off.error_code, off.member_id, off.member_epoch) == (
        ErrorCode.unsupported_version,
        None,
        0,
    )
    describe = _request(
        "consumer_group_describe",
        1,
        "ConsumerGroupDescribeRequest",
        group_ids=("g1", "g2"),
        include_authorized_operations=False,
    )
    described = ask(kafka_broker.bootstrap_servers, CONSUMER_GROUP_DESCRIBE, 1, describe)
    assert [(g.group_id, g.error_code, g.group_state) for g in described.groups] == [
        ("g1", ErrorCode.unsupported_version, ""),
        ("g2", ErrorCode.unsupported_version, ""),
    ]

    assert update_features(kafka_broker, ("group.version", 1, UPGRADE)).error_code == 0
    assert finalized(kafka_broker)[0]["group.version"] == 1
    # As a client does: find the coordinator first (Kafka then creates
    # __consumer_offsets), and ask again while it loads.
    find = _request(
        "find_coordinator", 4, "FindCoordinatorRequest", key_type=i8(0), coordinator_keys=("g",)
    )
    ask(kafka_broker.bootstrap_servers, 10, 4, find)
    for _ in range(100):
        on = consumer_group_heartbeat(kafka_broker)
        if on.error_code not in (ErrorCode.not_coordinator, ErrorCode.coordinator_not_available):
            break
        time.sleep(0.1)
    assert on.error_code == ErrorCode.none and on.member_epoch == 1


@pytest.mark.usefixtures("restore_features")
def test_feature_levels_go_down_and_back_up(kafka_broker: Broker) -> None:
    """What kafka-features downgrade/upgrade do to what describeFeatures shows."""
    steps: list[tuple[tuple[str, int, int], dict[str, int]]] = [
        (("transaction.version", 1, SAFE), {"transaction.version": 1}),
        (("transaction.version", 0, SAFE), {}),
        (("metadata.version", 26, SAFE), {"metadata.version": 26}),
        (("eligible.leader.replicas.version", 0, UNSAFE), {}),
    ]
    base = finalized(kafka_broker)[0]
    for update, shown in steps:
        assert update_features(kafka_broker, update).error_code == ErrorCode.none
        levels = finalized(kafka_broker)[0]
        name = update[0]
        assert {k: v for k, v in levels.items() if k == name} == shown
    # Going up again needs the upgrade type; back where it started.
    bad = update_features(kafka_broker, ("metadata.version", 27, SAFE))
    assert bad.error_message == FAILED + (
        "Invalid update version 27 for feature metadata.version. "
        "Can't downgrade to a newer version."
    )
    restored = update_features(
        kafka_broker,
        ("transaction.version", 2, UPGRADE),
        ("metadata.version", 27, UPGRADE),
        ("eligible.leader.replicas.version", 1, UPGRADE),
    )
    assert restored.error_code == ErrorCode.none
    assert finalized(kafka_broker)[0] == base


def test_update_features_v1_answers_per_feature(kafka_broker: Broker) -> None:
    ok = update_features(kafka_broker, ("group.version", 1, UPGRADE), validate_only=True, version=1)
    assert [(r.feature, r.error_code, r.error_message) for r in ok.results] == [
        ("group.version", ErrorCode.none, "NONE")
    ]
    bad = update_features(kafka_broker, ("nope", 1, UPGRADE), validate_only=True, version=1)
    assert (bad.error_code, bad.results) == (ErrorCode.invalid_update_version, ())


def test_update_features_v0_takes_every_update_as_an_upgrade(kafka_broker: Broker) -> None:
    """v0's allow_downgrade is no longer read: a v0 downgrade is refused."""
    key = _request(
        "update_features",
        0,
        "FeatureUpdateKey",
        feature="group.version",
        max_version_level=i16(0),
        allow_downgrade=True,
    )
    request = _request("update_features", 0, "UpdateFeaturesRequest", feature_updates=(key,))
    response = ask(kafka_broker.bootstrap_servers, UPDATE_FEATURES, 0, request)
    assert response.error_code == ErrorCode.invalid_update_version
    assert "without setting the upgrade type" in response.error_message
    assert finalized(kafka_broker)[0]["group.version"] == 1


# -- AlterReplicaLogDirs -----------------------------------------------------------


def alter_replica_log_dirs(broker: Broker, path: str, topic: str, *partitions: int) -> Any:
    api = "alter_replica_log_dirs"
    topics = (
        _request(
            api, 2, "AlterReplicaLogDirTopic", name=topic, partitions=tuple(map(i32, partitions))
        ),
    )
    request = _request(
        api,
        2,
        "AlterReplicaLogDirsRequest",
        dirs=(_request(api, 2, "AlterReplicaLogDir", path=path, topics=topics),),
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
        request = _request("describe_log_dirs", 4, "DescribeLogDirsRequest", topics=None)
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
    request = _request("unregister_broker", 0, "UnregisterBrokerRequest", broker_id=i32(99))
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
    create = _request(
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
    renew = _request(
        "renew_delegation_token",
        2,
        "RenewDelegationTokenRequest",
        hmac=b"abc",
        renew_period=datetime.timedelta(seconds=1),
    )
    assert raw_answer(kafka_broker, 39, 2, renew) == b"\0\x40" + no_time + b"\0\0\0\0\0"
    describe = _request(
        "describe_delegation_token", 3, "DescribeDelegationTokenRequest", owners=None
    )
    answer = ask(kafka_broker.bootstrap_servers, 41, 3, describe)
    assert (answer.error_code, answer.tokens) == (
        ErrorCode.delegation_token_request_not_allowed,
        (),
    )


# -- KRaft voters --------------------------------------------------------------------


def cluster_id(broker: Broker) -> str:
    request = _request(
        "describe_cluster",
        2,
        "DescribeClusterRequest",
        include_cluster_authorized_operations=False,
        endpoint_type=i8(1),
        include_fenced_brokers=False,
    )
    return str(ask(broker.bootstrap_servers, DESCRIBE_CLUSTER, 2, request).cluster_id)


def add_voter(broker: Broker, voter_id: int, cluster: str | None = None) -> Any:
    listener = _request(
        "add_raft_voter", 0, "Listener", name="CONTROLLER", host="localhost", port=9
    )
    request = _request(
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
    request = _request(
        "remove_raft_voter",
        0,
        "RemoveRaftVoterRequest",
        cluster_id=cluster,
        voter_id=i32(voter_id),
        voter_directory_id=uuid.UUID(int=1 << 64),
    )
    return ask(broker.bootstrap_servers, REMOVE_RAFT_VOTER, 0, request)


def quorum_voter(broker: Broker) -> Any:
    partition = _request("describe_quorum", 2, "PartitionData", partition_index=i32(0))
    topic = _request(
        "describe_quorum", 2, "TopicData", topic_name="__cluster_metadata", partitions=(partition,)
    )
    request = _request("describe_quorum", 2, "DescribeQuorumRequest", topics=(topic,))
    response = ask(broker.bootstrap_servers, DESCRIBE_QUORUM, 2, request)
    [voter] = response.topics[0].partitions[0].current_voters
    return voter


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
        assert finalized(broker)[0]["kraft.version"] == 1
        voter = quorum_voter(broker)
        assert voter.replica_directory_id not in (None, uuid.UUID(int=0))
        import base64

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
