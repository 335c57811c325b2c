"""The emulated Kafka's API surface on the wire, on every backend.

ApiVersions is compared with Kafka 4.3.1's own answer (captured from the `kafka`
backend and written down below): the emulator serves every API it lists. The raised versions' new shapes are exercised here:
Produce and Fetch by topic id (v13), fetch sessions (KIP-227), batched
FindCoordinator (v4+) and OffsetFetch (v8+), Metadata v13 and DescribeCluster v2.
"""

from __future__ import annotations

import datetime
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from batch_builder import build_batch
from kio.schema.api_versions.v4.request import ApiVersionsRequest
from kio.schema.errors import ErrorCode
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.static.primitive import i8, i16, i32, i64
from raw_client import ask, connect, read_frame, request_frame

from kafkatest import Broker
from kafkatest.emulator.release import KAFKA_RELEASE
from kafkatest.jars.coordinates import DEFAULT_KAFKA_VERSION
from kafkatest.pytest_plugin import unique_topic_name

PRODUCE, FETCH, METADATA, FIND_COORDINATOR, OFFSET_FETCH, API_VERSIONS = 0, 1, 3, 10, 9, 18
INITIAL_EPOCH, FINAL_EPOCH = 0, -1
DESCRIBE_CLUSTER = 60

#: Kafka 4.3.1's ApiVersions v4 answer on a single KRaft node (broker+controller, no
#: client-telemetry reporter, share and streams groups off as the `kafka` backend formats
#: it; they are advertised all the same): api key -> (min, max).
KAFKA_APIS: dict[int, tuple[int, int]] = {
    0: (0, 13), 1: (4, 18), 2: (1, 11), 3: (0, 13), 8: (2, 10), 9: (1, 10), 10: (0, 6),
    11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 6), 16: (0, 5), 17: (0, 1),
    18: (0, 4), 19: (2, 7), 20: (1, 6), 21: (0, 2), 22: (0, 5), 23: (2, 4), 24: (0, 5),
    25: (0, 4), 26: (0, 5), 27: (1, 2), 28: (0, 5), 29: (1, 3), 30: (1, 3), 31: (1, 3),
    32: (1, 4), 33: (0, 2), 34: (1, 2), 35: (1, 5), 36: (0, 2), 37: (0, 3), 38: (1, 3),
    39: (1, 2), 40: (1, 2), 41: (1, 3), 42: (0, 2), 43: (0, 2), 44: (0, 1), 45: (0, 1),
    46: (0, 0), 47: (0, 0), 48: (0, 1), 49: (0, 1), 50: (0, 0), 51: (0, 0), 55: (0, 2),
    57: (0, 2), 60: (0, 2), 61: (0, 0), 64: (0, 0), 65: (0, 0), 66: (0, 2), 68: (0, 1),
    69: (0, 1), 74: (0, 1), 75: (0, 0), 76: (1, 1), 77: (1, 1), 78: (1, 2), 79: (1, 2),
    80: (0, 1), 81: (0, 0), 83: (0, 0), 84: (0, 0), 85: (0, 1), 86: (0, 0), 87: (0, 1),
    88: (0, 0), 89: (0, 0), 90: (0, 1), 91: (0, 0), 92: (0, 0),
}  # fmt: skip

#: Supported feature ranges Kafka 4.3.1 reports, and the levels it finalizes when
#: formatted as the `kafka` backend formats it (share.version and streams.version 0,
#: which ApiVersions leaves out, as every level 0).
KAFKA_SUPPORTED = {
    "group.version": (0, 1),
    "kraft.version": (0, 1),
    "metadata.version": (7, 30),
    "share.version": (0, 1),
    "streams.version": (0, 1),
    "transaction.version": (0, 2),
    "eligible.leader.replicas.version": (0, 1),
}
KAFKA_FINALIZED = {
    "group.version": 1,
    "transaction.version": 2,
    "eligible.leader.replicas.version": 1,
    "metadata.version": 30,
}


def api_versions(broker: Broker) -> Any:
    request = ApiVersionsRequest(client_software_name="kafkatest", client_software_version="1")
    return ask(broker.bootstrap_servers, API_VERSIONS, 4, request)


def test_the_kafka_backend_runs_the_release_the_emulator_answers_as() -> None:
    """The tables here and the emulator's are one release's: the `kafka` backend's
    default."""
    assert DEFAULT_KAFKA_VERSION == KAFKA_RELEASE == "4.3.1"


def test_api_versions_are_kafkas(kafka_broker: Broker) -> None:
    """All 75 APIs, each with Kafka 4.3.1's version range."""
    response = api_versions(kafka_broker)
    advertised = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert advertised == KAFKA_APIS


def test_api_versions_report_kafkas_features(kafka_broker: Broker) -> None:
    """What Admin.describeFeatures and kafka-features describe show; clients read
    transaction.version to choose KIP-890's transaction protocol."""
    response = api_versions(kafka_broker)
    supported = {f.name: (f.min_version, f.max_version) for f in response.supported_features}
    finalized = {f.name: f.max_version_level for f in response.finalized_features}
    assert supported == KAFKA_SUPPORTED
    assert finalized == KAFKA_FINALIZED
    assert all(f.min_version_level == f.max_version_level for f in response.finalized_features)
    assert response.finalized_features_epoch >= 0


@pytest.mark.parametrize(
    ("name", "version"), [("", ""), ("bad name", "1"), ("-x", "1"), ("x", ".1")]
)
def test_api_versions_refuses_a_malformed_client_software_name_or_version(
    kafka_broker: Broker, name: str, version: str
) -> None:
    """v3+ names the client's software; Kafka answers INVALID_REQUEST, and nothing
    else, to a name or version outside [a-zA-Z0-9](?:[a-zA-Z0-9-.]*[a-zA-Z0-9])?."""
    request = ApiVersionsRequest(client_software_name=name, client_software_version=version)
    response = ask(kafka_broker.bootstrap_servers, API_VERSIONS, 4, request)
    assert response.error_code == ErrorCode.invalid_request
    assert (response.api_keys, response.supported_features, response.finalized_features) == (
        (),
        (),
        (),
    )
    assert response.finalized_features_epoch == -1
    good = ApiVersionsRequest(client_software_name="ok", client_software_version="1.0-x")
    assert ask(kafka_broker.bootstrap_servers, API_VERSIONS, 4, good).error_code == ErrorCode.none


def test_produce_v0_to_v2_are_advertised_but_not_served(kafka_broker: Broker) -> None:
    """Kafka advertises Produce from v0 (KAFKA-18659) yet closes the connection on a
    v0-2 request, whose message formats it no longer reads."""
    body = b"\xff\xff" + b"\x00\x00\x00\x01" + b"\x00\x00\x03\xe8" + b"\x00\x00\x00\x00"
    with connect(kafka_broker.bootstrap_servers) as sock:
        sock.sendall(request_frame(PRODUCE, 2, 5, body))
        assert read_frame(sock) is None


# -- topic ids: Produce and Fetch v13+ ---------------------------------------------


@pytest.fixture
def topic_with_id(kafka_broker: Broker) -> Iterator[tuple[str, uuid.UUID]]:
    name = unique_topic_name("surface")
    kafka_broker.create_topic(name, partitions=2)
    try:
        yield name, topic_id(kafka_broker, name)
    finally:
        kafka_broker.delete_topic(name)


def topic_id(broker: Broker, name: str) -> uuid.UUID:
    request = MetadataRequest(
        topics=(MetadataRequestTopic(name=name, topic_id=None),),
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    [topic] = ask(broker.bootstrap_servers, METADATA, 12, request).topics
    assert topic.error_code == ErrorCode.none
    return topic.topic_id


def produce_v13(broker: Broker, topic: uuid.UUID, partition: int, values: list[bytes]) -> Any:
    from kio.schema.produce.v13.request import (
        PartitionProduceData,
        ProduceRequest,
        TopicProduceData,
    )

    request = ProduceRequest(
        transactional_id=None,
        acks=i16(-1),
        timeout=datetime.timedelta(seconds=10),
        topic_data=(
            TopicProduceData(
                topic_id=topic,
                partition_data=(
                    PartitionProduceData(index=i32(partition), records=build_batch(values)),
                ),
            ),
        ),
    )
    # A just-created topic's leader may still be starting on Kafka: retry until it serves.
    for _ in range(100):
        response = ask(broker.bootstrap_servers, PRODUCE, 13, request)
        errors = {p.error_code for t in response.responses for p in t.partition_responses}
        if ErrorCode.not_leader_or_follower not in errors:
            return response
        time.sleep(0.1)
    raise AssertionError(f"no leader for {topic}-{partition}")


def test_produce_v13_names_topics_by_id(
    kafka_broker: Broker, topic_with_id: tuple[str, uuid.UUID]
) -> None:
    name, known = topic_with_id
    [answer] = produce_v13(kafka_broker, known, 1, [b"a", b"b"]).responses
    assert answer.topic_id == known
    [partition] = answer.partition_responses
    assert (partition.index, partition.error_code, partition.base_offset) == (1, ErrorCode.none, 0)

    unknown = uuid.uuid4()
    [answer] = produce_v13(kafka_broker, unknown, 0, [b"c"]).responses
    assert answer.topic_id == unknown
    [partition] = answer.partition_responses
    assert partition.error_code == ErrorCode.unknown_topic_id
    assert kafka_broker.latest_offsets(name) == {0: 0, 1: 2}


# -- fetch sessions (KIP-227) --------------------------------------------------------


def fetch(
    broker: Broker,
    version: int,
    topics: list[tuple[Any, list[tuple[int, int]]]],
    session_id: int = 0,
    epoch: int = -1,
    forgotten: list[tuple[Any, list[int]]] | None = None,
) -> Any:
    """A consumer's Fetch: topics as (name or id, [(partition, offset)])."""
    from kio.index import load_payload_module
    from kio.static.constants import EntityType

    types = load_payload_module(FETCH, version, EntityType.request)
    by_id = version >= 13
    topic_field = "topic_id" if by_id else "topic"
    request = types.FetchRequest(
        max_wait=datetime.timedelta(milliseconds=10),
        min_bytes=i32(0),
        max_bytes=i32(1 << 20),
        isolation_level=i8(0),
        session_id=i32(session_id),
        session_epoch=i32(epoch),
        topics=tuple(
            types.FetchTopic(
                **{topic_field: topic},
                partitions=tuple(
                    types.FetchPartition(
                        partition=i32(p),
                        fetch_offset=i64(offset),
                        partition_max_bytes=i32(1 << 20),
                    )
                    for p, offset in parts
                ),
            )
            for topic, parts in topics
        ),
        forgotten_topics_data=tuple(
            types.ForgottenTopic(**{topic_field: t}, partitions=tuple(i32(p) for p in ps))
            for t, ps in (forgotten or [])
        ),
        rack_id="",
    )
    return ask(broker.bootstrap_servers, FETCH, version, request)


def answered(response: Any, by_id: bool = True) -> dict[tuple[Any, int], tuple[int, int, int]]:
    """(topic, partition) -> (error, high watermark, bytes of records)."""
    return {
        (t.topic_id if by_id else t.topic, p.partition_index): (
            p.error_code,
            p.high_watermark,
            len(p.records or b""),
        )
        for t in response.responses
        for p in t.partitions
    }


@pytest.mark.parametrize("version", [12, 18])
def test_fetch_sessions_send_only_what_changed(
    kafka_broker: Broker, topic_with_id: tuple[str, uuid.UUID], version: int
) -> None:
    name, tid = topic_with_id
    by_id = version >= 13
    key = tid if by_id else name
    produce_v13(kafka_broker, tid, 0, [b"x"])

    # Kafka may still be starting partition 1's leader: retry the full fetch until it serves.
    for _ in range(100):
        full = fetch(kafka_broker, version, [(key, [(0, 0), (1, 0)])], epoch=0)
        codes = {answer[0] for answer in answered(full, by_id).values()}
        if ErrorCode.not_leader_or_follower not in codes:
            break
        time.sleep(0.1)
    assert full.error_code == ErrorCode.none and full.session_id != 0
    got = answered(full, by_id)
    assert set(got) == {(key, 0), (key, 1)}
    assert got[(key, 0)][:2] == (ErrorCode.none, 1) and got[(key, 0)][2] > 0
    assert got[(key, 1)] == (ErrorCode.none, 0, 0)
    session = full.session_id

    # Epoch 1 moves partition 0 past its record: nothing new anywhere, nothing sent.
    quiet = fetch(kafka_broker, version, [(key, [(0, 1)])], session_id=session, epoch=1)
    assert (quiet.error_code, quiet.session_id, answered(quiet, by_id)) == (
        ErrorCode.none,
        session,
        {},
    )

    # A record in partition 1 (which the client did not mention) is news.
    produce_v13(kafka_broker, tid, 1, [b"y"])
    news = answered(fetch(kafka_broker, version, [], session_id=session, epoch=2), by_id)
    assert list(news) == [(key, 1)] and news[(key, 1)][:2] == (ErrorCode.none, 1)

    # Forgotten partitions leave the session: new data there is not sent.
    fetch(
        kafka_broker,
        version,
        [(key, [(1, 1)])],
        session_id=session,
        epoch=3,
        forgotten=[(key, [0])],
    )
    produce_v13(kafka_broker, tid, 0, [b"z"])
    after = fetch(kafka_broker, version, [], session_id=session, epoch=4)
    assert answered(after, by_id) == {}

    # A replayed epoch, an unknown session: errors without partitions, no session.
    stale = fetch(kafka_broker, version, [], session_id=session, epoch=4)
    assert (stale.error_code, stale.session_id, stale.responses) == (
        ErrorCode.invalid_fetch_session_epoch,
        0,
        (),
    )
    lost = fetch(kafka_broker, version, [], session_id=session ^ 0x5A5A5A5A or 1, epoch=1)
    assert lost.error_code == ErrorCode.fetch_session_id_not_found

    # Epoch -1 closes the session and fetches without one.
    closing = fetch(kafka_broker, version, [(key, [(0, 0)])], session_id=session, epoch=-1)
    assert (closing.error_code, closing.session_id) == (ErrorCode.none, 0)
    assert list(answered(closing, by_id)) == [(key, 0)]
    gone = fetch(kafka_broker, version, [], session_id=session, epoch=5)
    assert gone.error_code == ErrorCode.fetch_session_id_not_found


def test_a_topic_id_session_refuses_a_by_name_fetch(
    kafka_broker: Broker, topic_with_id: tuple[str, uuid.UUID]
) -> None:
    _, tid = topic_with_id
    session = fetch(kafka_broker, 13, [(tid, [(0, 0)])], epoch=0).session_id
    assert session != 0
    mixed = fetch(kafka_broker, 12, [], session_id=session, epoch=1)
    assert (mixed.error_code, mixed.responses) == (ErrorCode.fetch_session_topic_id_error, ())


def test_fetch_v13_answers_an_unknown_topic_id_per_partition(kafka_broker: Broker) -> None:
    unknown = uuid.uuid4()
    response = fetch(kafka_broker, 18, [(unknown, [(0, 0)])])
    assert response.error_code == ErrorCode.none
    assert answered(response) == {(unknown, 0): (ErrorCode.unknown_topic_id, -1, 0)}


ZERO_ID = uuid.UUID(int=0)


def test_fetch_naming_the_zero_topic_id_fails_where_kafka_s_does(
    kafka_broker: Broker, topic_with_id: tuple[str, uuid.UUID]
) -> None:
    """The zero id names no topic and has no name: building the response, Kafka 4.3
    compares the next partition's topic name with it, and throws, answering a
    top-level UNKNOWN_SERVER_ERROR with the request's session id. A session keeps such
    a partition by its id like any other (4.1 failed there too)."""
    _, tid = topic_with_id
    alone = fetch(kafka_broker, 16, [(ZERO_ID, [(0, 0)])])
    assert (alone.error_code, answered(alone)) == (
        ErrorCode.none,
        {(None, 0): (ErrorCode.unknown_topic_id, -1, 0)},
    )
    # Kafka lists partitions it read before those it could not: last, nothing follows it.
    first = fetch(kafka_broker, 16, [(ZERO_ID, [(0, 0)]), (tid, [(0, 0)])])
    assert first.error_code == ErrorCode.none
    assert set(answered(first)) == {(None, 0), (tid, 0)}
    # Followed by another failing partition: the request fails.
    for topics in (
        [(ZERO_ID, [(0, 0), (1, 0)])],
        [(tid, [(7, 0)]), (ZERO_ID, [(0, 0)])],
        [(ZERO_ID, [(0, 0)]), (uuid.uuid4(), [(0, 0)])],
    ):
        failed = fetch(kafka_broker, 16, topics, epoch=FINAL_EPOCH)
        assert (failed.error_code, failed.session_id, failed.responses) == (
            ErrorCode.unknown_server_error,
            0,
            (),
        ), topics
    # Opening a session with it, last, works.
    for topics in ([(ZERO_ID, [(0, 0)])], [(tid, [(0, 0)]), (ZERO_ID, [(0, 0)])]):
        opened = fetch(kafka_broker, 16, topics, epoch=INITIAL_EPOCH)
        assert (opened.error_code, opened.session_id != 0) == (ErrorCode.none, True), topics
        assert answered(opened)[(None, 0)] == (ErrorCode.unknown_topic_id, -1, 0)
    # A session closed by a request that opens another is gone.
    session = fetch(kafka_broker, 16, [(tid, [(0, 0)])], epoch=INITIAL_EPOCH).session_id
    reopened = fetch(kafka_broker, 16, [(ZERO_ID, [(0, 0)])], session_id=session, epoch=0)
    assert reopened.error_code == ErrorCode.none
    assert reopened.session_id not in (0, session)
    gone = fetch(kafka_broker, 16, [], session_id=session, epoch=1)
    assert gone.error_code == ErrorCode.fetch_session_id_not_found


def test_an_incremental_fetch_naming_the_zero_topic_id_fails_and_moves_the_epoch(
    kafka_broker: Broker, topic_with_id: tuple[str, uuid.UUID]
) -> None:
    _, tid = topic_with_id
    # Kafka may still be starting the leader: an error would make the session resend it.
    for _ in range(100):
        if answered(fetch(kafka_broker, 16, [(tid, [(0, 0)])]))[(tid, 0)][0] == ErrorCode.none:
            break
        time.sleep(0.1)
    session = fetch(kafka_broker, 16, [(tid, [(0, 0)])], epoch=INITIAL_EPOCH).session_id
    assert session != 0

    # The request is applied (both partitions join the session) and the epoch moves on,
    # though building its response fails.
    failed = fetch(
        kafka_broker, 16, [(tid, [(5, 0)]), (ZERO_ID, [(0, 0)])], session_id=session, epoch=1
    )
    assert (failed.error_code, failed.session_id, failed.responses) == (
        ErrorCode.unknown_server_error,
        session,
        (),
    )
    retried = fetch(kafka_broker, 16, [], session_id=session, epoch=1)
    assert (retried.error_code, retried.session_id) == (ErrorCode.invalid_fetch_session_epoch, 0)
    # Each later response fails too while the session holds it; forgetting it mends it.
    again = fetch(kafka_broker, 16, [], session_id=session, epoch=2)
    assert (again.error_code, again.session_id) == (ErrorCode.unknown_server_error, session)
    forgetting = fetch(
        kafka_broker, 16, [], session_id=session, epoch=3, forgotten=[(ZERO_ID, [0])]
    )
    assert (forgetting.error_code, forgetting.session_id) == (ErrorCode.none, session)
    assert answered(forgetting) == {(tid, 5): (ErrorCode.unknown_topic_or_partition, -1, 0)}

    # Forgetting every partition closes the session: the answer has none.
    emptied = fetch(
        kafka_broker,
        16,
        [],
        session_id=session,
        epoch=4,
        forgotten=[(tid, [0, 5]), (ZERO_ID, [0])],
    )
    assert (emptied.error_code, emptied.session_id, emptied.responses) == (ErrorCode.none, 0, ())
    gone = fetch(kafka_broker, 16, [], session_id=session, epoch=5)
    assert gone.error_code == ErrorCode.fetch_session_id_not_found


# -- batched coordinator lookups and offset fetches ------------------------------------


def test_find_coordinator_v4_and_later_answer_each_key(kafka_broker: Broker) -> None:
    from kio.schema.find_coordinator.v6.request import FindCoordinatorRequest

    groups = [f"g-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    request = FindCoordinatorRequest(key_type=i8(0), coordinator_keys=tuple(groups))
    response = _until_coordinators(kafka_broker, request)
    host, port = kafka_broker.bootstrap_servers.rsplit(":", 1)
    assert [(c.key, c.error_code, c.host, c.port) for c in response.coordinators] == [
        (g, ErrorCode.none, host, int(port)) for g in groups
    ]


def _until_coordinators(broker: Broker, request: Any) -> Any:
    """Kafka answers COORDINATOR_NOT_AVAILABLE while it creates __consumer_offsets."""
    from kafkatest.brokers.client import wait_until

    answers: list[Any] = []

    def ready() -> bool:
        answers.append(ask(broker.bootstrap_servers, FIND_COORDINATOR, 6, request))
        return all(c.error_code == ErrorCode.none for c in answers[-1].coordinators)

    wait_until(ready, 30, "the group coordinator is available")
    return answers[-1]


def test_offset_fetch_v8_batches_groups(kafka_broker: Broker) -> None:
    from kio.schema.offset_fetch.v9.request import (
        OffsetFetchRequest,
        OffsetFetchRequestGroup,
        OffsetFetchRequestTopics,
    )

    name = unique_topic_name("offsets")
    kafka_broker.create_topic(name, partitions=1)
    try:
        committed, empty = f"g-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
        _commit(kafka_broker, committed, name, 5)
        request = OffsetFetchRequest(
            groups=(
                OffsetFetchRequestGroup(
                    group_id=committed,
                    member_id=None,
                    member_epoch=i32(-1),
                    topics=(OffsetFetchRequestTopics(name=name, partition_indexes=(i32(0),)),),
                ),
                OffsetFetchRequestGroup(
                    group_id=empty, member_id=None, member_epoch=i32(-1), topics=None
                ),
            ),
            require_stable=False,
        )
        response = ask(kafka_broker.bootstrap_servers, OFFSET_FETCH, 9, request)
        by_group = {g.group_id: g for g in response.groups}
        first = by_group[committed]
        assert first.error_code == ErrorCode.none
        assert [
            (t.name, p.partition_index, p.committed_offset, p.error_code)
            for t in first.topics
            for p in t.partitions
        ] == [(name, 0, 5, ErrorCode.none)]
        assert (by_group[empty].error_code, by_group[empty].topics) == (ErrorCode.none, ())
    finally:
        kafka_broker.delete_topic(name)


def _commit(broker: Broker, group: str, topic: str, offset: int) -> None:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": group})
    try:
        consumer.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
    finally:
        consumer.close()


# -- Metadata v13, DescribeCluster v2 ------------------------------------------------


def test_metadata_v13_has_a_top_level_error_code(kafka_broker: Broker) -> None:
    from kio.schema.metadata.v13.request import MetadataRequest as MetadataRequest13

    request = MetadataRequest13(
        topics=(), allow_auto_topic_creation=False, include_topic_authorized_operations=False
    )
    response = ask(kafka_broker.bootstrap_servers, METADATA, 13, request)
    assert response.error_code == ErrorCode.none
    assert [b.port for b in response.brokers] == [
        int(a.rsplit(":", 1)[1]) for a in kafka_broker.bootstrap_servers.split(",")
    ]


def test_describe_cluster_v2_says_no_broker_is_fenced(kafka_broker: Broker) -> None:
    from kio.schema.describe_cluster.v2.request import DescribeClusterRequest

    request = DescribeClusterRequest(
        include_cluster_authorized_operations=False,
        endpoint_type=i8(1),
        include_fenced_brokers=True,
    )
    response = ask(kafka_broker.bootstrap_servers, DESCRIBE_CLUSTER, 2, request)
    assert response.error_code == ErrorCode.none
    assert [(b.port, b.is_fenced) for b in response.brokers] == [
        (int(kafka_broker.bootstrap_servers.rsplit(":", 1)[1]), False)
    ]


def _neutral_value(field: Any, hint: Any) -> Any:
    """A field's "nothing" value: empty arrays, None, 0, "", the epoch."""
    import dataclasses
    import typing

    args = typing.get_args(hint)
    optional = type(None) in args
    if typing.get_origin(hint) is tuple or any(typing.get_origin(a) is tuple for a in args):
        return None if optional else ()
    if optional:
        return None
    kind = field.metadata.get("kafka_type", "")
    if kind == "string":
        return ""
    if kind in ("bytes", "records"):
        return b""
    if kind == "bool":
        return False
    if kind == "uuid":
        return uuid.UUID(int=0)
    if kind.startswith("timedelta"):
        return datetime.timedelta(0)
    if kind == "datetime_i64":
        return datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    if kind == "float64":
        return 0.0
    if dataclasses.is_dataclass(hint):
        return _neutral_request(hint)
    return hint(0)


def _neutral_request(cls: Any, **fields: Any) -> Any:
    import dataclasses
    import typing

    hints = typing.get_type_hints(cls)
    values = {
        f.name: _neutral_value(f, hints[f.name])
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    return cls(**{**values, **fields})


#: Kafka 4.1.1 closes the connection for these neutral requests: a DescribeAcls filter
#: of code 0 (UNKNOWN) everywhere is refused as the request is parsed.
_CLOSED_ON_KAFKA_41 = {(29, 1), (29, 2), (29, 3)}
#: Kafka 4.1.1 never answers an AddPartitionsToTxn v4+ (the brokers' batched form)
#: with no transactions in it; the emulator answers it with no results. Left out.
_UNANSWERED_ON_KAFKA_41 = {(24, 4), (24, 5)}


def test_a_neutral_request_of_every_served_version_is_answered_as_on_kafka(
    kafka_broker: Broker,
) -> None:
    """Each version of each API Kafka 4.1 serves, sent with every field at its "nothing"
    value (empty arrays, zeros, empty strings; acks=-1), is answered, or refused with
    a closed connection, exactly where Kafka 4.1.1 does (recorded on the `kafka`
    backend). The ones that act on the cluster act on nothing (no topics, no
    features, no voters; UnregisterBroker and AddRaftVoter name broker 0, which is
    refused or left registered)."""
    from kio.index import load_payload_module
    from kio.static.constants import EntityType

    served = {
        (key, version)
        for key, (low, high) in KAFKA_APIS.items()
        for version in range(max(low, 3) if key == PRODUCE else low, high + 1)
    }
    closed = set()
    for key, version in sorted(served - _UNANSWERED_ON_KAFKA_41):
        module = load_payload_module(key, version, EntityType.request)
        [cls] = [
            c
            for c in vars(module).values()
            if isinstance(c, type) and getattr(c, "__type__", None) == EntityType.request
        ]
        request = _neutral_request(cls, **({"acks": i16(-1)} if key == PRODUCE else {}))
        with connect(kafka_broker.bootstrap_servers) as sock:
            sock.sendall(request_frame(key, version, 5, _encode(request)))
            if read_frame(sock) is None:
                closed.add((key, version))
    assert closed == _CLOSED_ON_KAFKA_41


def _encode(entity: Any) -> bytes:
    from raw_client import encode

    return encode(entity)


def _neutral_answer(broker: Broker, key: int, version: int) -> Any:
    from kio.index import load_payload_module
    from kio.static.constants import EntityType

    module = load_payload_module(key, version, EntityType.request)
    [cls] = [
        c
        for c in vars(module).values()
        if isinstance(c, type) and getattr(c, "__type__", None) == EntityType.request
    ]
    return ask(broker.bootstrap_servers, key, version, _neutral_request(cls))


#: What Kafka 4.1.1 answers to neutral requests where the emptiness itself is the
#: error, or where it writes "" rather than null: (api key, version) -> field -> value.
_NEUTRAL_ANSWERS: dict[tuple[int, int], dict[str, Any]] = {
    # An empty transactional id is refused before it is looked up.
    (25, 4): {"error_code": ErrorCode.invalid_request},  # AddOffsetsToTxn
    (26, 5): {"error_code": ErrorCode.invalid_request},  # EndTxn
    # SyncGroup v5 needs its protocol type and name before anything else.
    (14, 5): {"error_code": ErrorCode.inconsistent_group_protocol},
    # OffsetDelete checks the group id before the coordinator.
    (47, 0): {"error_code": ErrorCode.invalid_group_id},
    # Success carries an empty message, not null.
    (45, 1): {"error_code": ErrorCode.none, "error_message": ""},  # AlterPartitionReassignments
    (48, 1): {"error_code": ErrorCode.none, "error_message": ""},  # DescribeClientQuotas
    (50, 0): {"error_code": ErrorCode.none, "error_message": ""},  # DescribeUserScramCredentials
    # A voter is named by its id and directory id: without a directory id it is none.
    (80, 0): {
        "error_code": ErrorCode.invalid_request,
        "error_message": "Add voter request didn't include a valid voter",
    },
    (81, 0): {
        "error_code": ErrorCode.invalid_request,
        "error_message": "Remove voter request didn't include a valid voter",
    },
    # DescribeQuorum lists the endpoints of the voters it described: here none.
    (55, 2): {"error_code": ErrorCode.none, "topics": (), "nodes": ()},
}


@pytest.mark.parametrize(("key", "version"), sorted(_NEUTRAL_ANSWERS))
def test_a_neutral_request_gets_kafkas_answer(kafka_broker: Broker, key: int, version: int) -> None:
    answer = _neutral_answer(kafka_broker, key, version)
    expected = _NEUTRAL_ANSWERS[(key, version)]
    assert {name: getattr(answer, name) for name in expected} == expected


def test_an_election_of_every_partition_lists_every_topic(kafka_broker: Broker) -> None:
    """ElectLeaders with no partitions named elects them all; each topic has its entry,
    empty where every partition already had its preferred leader."""
    topic = unique_topic_name("elect-all")
    kafka_broker.create_topic(topic, partitions=2)
    answer = _neutral_answer(kafka_broker, 43, 2)  # topic_partitions null: all of them
    assert answer.error_code == ErrorCode.none
    entries = {r.topic: r.partition_result for r in answer.replica_election_results}
    assert entries[topic] == ()
    assert all(results == () for results in entries.values()), entries
