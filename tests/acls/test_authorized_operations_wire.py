"""Authorized operations in describe answers, on every backend: Metadata (v8+, the
cluster's in v8-10), DescribeCluster, DescribeTopicPartitions, DescribeGroups (v3+)
and ConsumerGroupDescribe, as raw requests and as an admin client reads them.

Each expectation was first observed on real Kafka 4.1.1 (StandardAuthorizer) and
holds for the emulator too; run with ``--kafka-backend=emulator,kafka``.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, TopicCollection, TopicPartition
from confluent_kafka.admin import AclOperation, AdminClient
from kio.static.primitive import i8, i32

from kafkatest import Broker

sys.path.insert(0, str(Path(__file__).parents[1] / "emulator"))
from admin_requests import request_entity
from raw_client import ask

ANONYMOUS = "User:ANONYMOUS"
NOT_ASKED = "not asked"
METADATA, DESCRIBE_GROUPS, DESCRIBE_CLUSTER, CONSUMER_GROUP_DESCRIBE = 3, 15, 60, 69
DESCRIBE_TOPIC_PARTITIONS = 75
_CODES = {
    3: "READ",
    4: "WRITE",
    5: "CREATE",
    6: "DELETE",
    7: "ALTER",
    8: "DESCRIBE",
    9: "CLUSTER_ACTION",
    10: "DESCRIBE_CONFIGS",
    11: "ALTER_CONFIGS",
    12: "IDEMPOTENT_WRITE",
}
EVERY_TOPIC_OPERATION = {
    "READ",
    "WRITE",
    "CREATE",
    "DELETE",
    "ALTER",
    "DESCRIBE",
    "DESCRIBE_CONFIGS",
    "ALTER_CONFIGS",
}
EVERY_CLUSTER_OPERATION = {
    "CREATE",
    "CLUSTER_ACTION",
    "DESCRIBE_CONFIGS",
    "ALTER_CONFIGS",
    "IDEMPOTENT_WRITE",
    "ALTER",
    "DESCRIBE",
}
EVERY_GROUP_OPERATION = {"READ", "DELETE", "DESCRIBE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"}


def _operations(field: int) -> set[str] | str:
    """The field as operation names, or NOT_ASKED for Integer.MIN_VALUE."""
    if field == -(2**31):
        return NOT_ASKED
    unknown = field & ~sum(1 << code for code in _CODES)
    assert not unknown, f"bits outside Kafka's operations: {unknown:#x}"
    return {name for code, name in _CODES.items() if field >> code & 1}


def _name(hint: str) -> str:
    return f"ops-{hint}-{uuid.uuid4().hex[:8]}"


# -- raw requests -------------------------------------------------------------------


def metadata(
    broker: Broker, topics: list[str] | None, *, version: int = 12, asked: bool = True
) -> tuple[dict[str, tuple[str, Any]], Any]:
    """({topic: (error, operations)}, cluster operations) of one Metadata request."""
    api = "metadata"
    by_id = {"topic_id": None} if version >= 10 else {}
    wanted = (
        None
        if topics is None
        else tuple(
            request_entity(api, version, "MetadataRequestTopic", name=t, **by_id) for t in topics
        )
    )
    cluster = {"include_cluster_authorized_operations": asked} if version <= 10 else {}
    request = request_entity(
        api,
        version,
        "MetadataRequest",
        topics=wanted,
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=asked,
        **cluster,
    )
    response = ask(broker.bootstrap_servers, METADATA, version, request)
    described = {
        t.name: (t.error_code.name, _operations(t.topic_authorized_operations))
        for t in response.topics
        if topics is not None or t.name.startswith("ops-")
    }
    cluster_field = getattr(response, "cluster_authorized_operations", None)
    return described, None if cluster_field is None else _operations(cluster_field)


def describe_cluster(broker: Broker, *, asked: bool = True) -> set[str] | str:
    request = request_entity(
        "describe_cluster",
        1,
        "DescribeClusterRequest",
        include_cluster_authorized_operations=asked,
        endpoint_type=i8(1),
    )
    response = ask(broker.bootstrap_servers, DESCRIBE_CLUSTER, 1, request)
    assert response.error_code.name == "none"
    return _operations(response.cluster_authorized_operations)


def describe_topic_partitions(broker: Broker, topics: list[str]) -> dict[str, tuple[str, Any]]:
    api = "describe_topic_partitions"
    request = request_entity(
        api,
        0,
        "DescribeTopicPartitionsRequest",
        topics=tuple(request_entity(api, 0, "TopicRequest", name=t) for t in topics),
        response_partition_limit=i32(100),
        cursor=None,
    )
    response = ask(broker.bootstrap_servers, DESCRIBE_TOPIC_PARTITIONS, 0, request)
    return {
        t.name: (t.error_code.name, _operations(t.topic_authorized_operations))
        for t in response.topics
    }


def describe_groups(
    broker: Broker, groups: list[str], *, version: int = 5, asked: bool = True
) -> dict[str, tuple[str, Any]]:
    request = request_entity(
        "describe_groups",
        version,
        "DescribeGroupsRequest",
        groups=tuple(groups),
        include_authorized_operations=asked,
    )
    response = ask(broker.bootstrap_servers, DESCRIBE_GROUPS, version, request)
    return {
        g.group_id: (g.error_code.name, _operations(g.authorized_operations))
        for g in response.groups
    }


def consumer_group_describe(
    broker: Broker, groups: list[str], *, asked: bool = True
) -> dict[str, tuple[str, Any]]:
    return {
        g.group_id: (g.error_code.name, _operations(g.authorized_operations))
        for g in described_consumer_groups(broker, groups, asked=asked)
    }


def described_consumer_groups(
    broker: Broker, groups: list[str], *, asked: bool = True
) -> tuple[Any, ...]:
    request = request_entity(
        "consumer_group_describe",
        0,
        "ConsumerGroupDescribeRequest",
        group_ids=tuple(groups),
        include_authorized_operations=asked,
    )
    return ask(broker.bootstrap_servers, CONSUMER_GROUP_DESCRIBE, 0, request).groups  # type: ignore[no-any-return]


# -- groups to describe ------------------------------------------------------------


def empty_classic_group(broker: Broker, topic: str) -> str:
    """A classic group with a committed offset and no member (state Empty)."""
    group = _name("classic")
    committed = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, 1)])
    broker.admin().alter_consumer_group_offsets([committed])[group].result(20)
    return group


@pytest.fixture
def consumer_group(kafka_broker: Broker) -> Iterator[tuple[Broker, str, str]]:
    """(broker, topic, group): a KIP-848 group whose one member holds the topic's
    partition; the member is the harness's own client (allowed everything)."""
    broker = kafka_broker
    yield from _consumer_group(broker)


@pytest.fixture
def acl_consumer_group(acl_broker: Broker) -> Iterator[tuple[Broker, str, str]]:
    yield from _consumer_group(acl_broker)


def _consumer_group(broker: Broker) -> Iterator[tuple[Broker, str, str]]:
    topic, group = _name("topic"), _name("consumer")
    broker.create_topic(topic, partitions=1)
    member = Consumer(
        {
            **broker.client_config(),
            "group.id": group,
            "group.protocol": "consumer",
        }
    )
    try:
        member.subscribe([topic])
        deadline = time.monotonic() + 30
        while not member.assignment():
            assert time.monotonic() < deadline, "the member was never assigned its partition"
            member.poll(0.2)
        yield broker, topic, group
    finally:
        member.close()


# -- without ACLs: every operation, when asked ---------------------------------------


def test_an_open_broker_reports_every_operation_when_asked(
    consumer_group: tuple[Broker, str, str],
) -> None:
    broker, topic, group = consumer_group
    classic, missing = empty_classic_group(broker, topic), _name("missing")

    for version in (8, 10, 12):
        topics, cluster = metadata(broker, [topic, missing], version=version)
        assert topics == {
            topic: ("none", EVERY_TOPIC_OPERATION),
            missing: ("unknown_topic_or_partition", EVERY_TOPIC_OPERATION),
        }, version
        assert cluster == (EVERY_CLUSTER_OPERATION if version <= 10 else None), version
    listed, _ = metadata(broker, None)
    assert listed[topic] == ("none", EVERY_TOPIC_OPERATION)
    not_asked, cluster = metadata(broker, [topic, missing], version=10, asked=False)
    assert {t: ops for t, (_, ops) in not_asked.items()} == {topic: NOT_ASKED, missing: NOT_ASKED}
    assert cluster == NOT_ASKED

    assert describe_cluster(broker) == EVERY_CLUSTER_OPERATION
    assert describe_cluster(broker, asked=False) == NOT_ASKED
    # DescribeTopicPartitions always reports them, for unknown topics too.
    assert describe_topic_partitions(broker, [topic, missing]) == {
        topic: ("none", EVERY_TOPIC_OPERATION),
        missing: ("unknown_topic_or_partition", EVERY_TOPIC_OPERATION),
    }

    # A group Kafka answers without an error gets them, an unknown one too until
    # v6 calls it GROUP_ID_NOT_FOUND (then it gets none).
    assert describe_groups(broker, [classic, missing]) == {
        classic: ("none", EVERY_GROUP_OPERATION),
        missing: ("none", EVERY_GROUP_OPERATION),
    }
    assert describe_groups(broker, [classic, missing], version=6) == {
        classic: ("none", EVERY_GROUP_OPERATION),
        missing: ("group_id_not_found", NOT_ASKED),
    }
    assert describe_groups(broker, [classic], version=3, asked=False) == {
        classic: ("none", NOT_ASKED)
    }
    assert consumer_group_describe(broker, [group, classic]) == {
        group: ("none", EVERY_GROUP_OPERATION),
        classic: ("group_id_not_found", NOT_ASKED),
    }
    assert consumer_group_describe(broker, [group], asked=False) == {group: ("none", NOT_ASKED)}


# -- with ACLs: what this principal may do --------------------------------------------


def test_acls_narrow_the_reported_operations_to_the_principals(
    acl_consumer_group: tuple[Broker, str, str],
) -> None:
    broker, member_topic, group = acl_consumer_group
    described, read, everything, hidden = (_name(h) for h in ("describe", "read", "all", "hidden"))
    for topic in (described, read, everything, hidden):
        broker.create_topic(topic, partitions=1)
    missing = _name("missing")
    classic = empty_classic_group(broker, everything)
    broker.allow(ANONYMOUS, "DESCRIBE", topic=described)
    broker.allow(ANONYMOUS, "READ", topic=read)
    broker.allow(ANONYMOUS, "ALL", topic=everything)
    broker.deny(ANONYMOUS, "ALTER", topic=everything)
    broker.allow(ANONYMOUS, "DESCRIBE", topic=missing)
    broker.allow(ANONYMOUS, "DESCRIBE", group=classic)
    broker.allow(ANONYMOUS, "ALTER_CONFIGS", group=classic)
    broker.allow(ANONYMOUS, "READ", group=group)

    # READ implies DESCRIBE, ALTER_CONFIGS implies DESCRIBE_CONFIGS; a DENY of ALTER
    # removes ALTER only; a topic it may not describe is refused, with no field.
    all_but_alter = EVERY_TOPIC_OPERATION - {"ALTER"}
    expected = {
        described: ("none", {"DESCRIBE"}),
        read: ("none", {"READ", "DESCRIBE"}),
        everything: ("none", all_but_alter),
        missing: ("unknown_topic_or_partition", {"DESCRIBE"}),
        hidden: ("topic_authorization_failed", NOT_ASKED),
    }
    asked = [described, read, everything, missing, hidden]
    for version in (10, 12):
        topics, cluster = metadata(broker, asked, version=version)
        assert topics == expected, version
        # Without DESCRIBE on the cluster its field is 0: no operation at all.
        assert cluster == (set() if version <= 10 else None), version
    listed, _ = metadata(broker, None)
    assert listed == {
        described: ("none", {"DESCRIBE"}),
        read: ("none", {"READ", "DESCRIBE"}),
        everything: ("none", all_but_alter),
    }
    assert describe_topic_partitions(broker, asked) == expected
    assert describe_cluster(broker) == set()

    assert describe_groups(broker, [classic]) == {
        classic: ("none", {"DESCRIBE", "ALTER_CONFIGS", "DESCRIBE_CONFIGS"})
    }
    # KAFKA-18813: a consumer group assigned a topic the client may not describe is
    # refused whole, so that describing it cannot reveal the topic's name.
    [refused] = described_consumer_groups(broker, [group])
    assert (refused.error_code.name, refused.error_message, refused.members) == (
        "topic_authorization_failed",
        "The group has described topic(s) that the client is not authorized to describe.",
        (),
    )
    assert _operations(refused.authorized_operations) == NOT_ASKED
    broker.allow(ANONYMOUS, "DESCRIBE", topic=member_topic)
    assert consumer_group_describe(broker, [group]) == {group: ("none", {"READ", "DESCRIBE"})}
    # The member is kafkatest's own client, named as on every backend (the emulator
    # knows it by a secret id that must not be shown to other clients).
    [described_group] = described_consumer_groups(broker, [group])
    assert [m.client_id for m in described_group.members] == ["kafkatest"]

    broker.allow(ANONYMOUS, "DESCRIBE", cluster=True)
    broker.allow(ANONYMOUS, "IDEMPOTENT_WRITE", cluster=True)
    assert metadata(broker, [described], version=10)[1] == {"DESCRIBE", "IDEMPOTENT_WRITE"}
    assert describe_cluster(broker) == {"DESCRIBE", "IDEMPOTENT_WRITE"}
    assert describe_cluster(broker, asked=False) == NOT_ASKED


def test_an_admin_client_reads_its_authorized_operations(acl_broker: Broker) -> None:
    """What `describe_topics` / `describe_cluster` / `describe_consumer_groups` with
    include_authorized_operations give a librdkafka admin client."""
    topic = _name("admin")
    acl_broker.create_topic(topic, partitions=1)
    group = empty_classic_group(acl_broker, topic)
    acl_broker.allow(ANONYMOUS, "WRITE", topic=topic)
    acl_broker.allow(ANONYMOUS, "DESCRIBE_CONFIGS", topic=topic)
    acl_broker.allow(ANONYMOUS, "DESCRIBE", cluster=True)
    acl_broker.allow(ANONYMOUS, "CREATE", cluster=True)
    acl_broker.allow(ANONYMOUS, "DELETE", group=group)
    admin = AdminClient({"bootstrap.servers": acl_broker.bootstrap_servers})

    described = admin.describe_topics(TopicCollection([topic]), include_authorized_operations=True)[
        topic
    ].result(20)
    assert set(described.authorized_operations) == {
        AclOperation.WRITE,
        AclOperation.DESCRIBE,
        AclOperation.DESCRIBE_CONFIGS,
    }
    cluster = admin.describe_cluster(include_authorized_operations=True).result(20)
    assert set(cluster.authorized_operations) == {AclOperation.DESCRIBE, AclOperation.CREATE}
    assert admin.describe_cluster().result(20).authorized_operations is None
    [consumer_group] = admin.describe_consumer_groups(
        [group], include_authorized_operations=True
    ).values()
    assert set(consumer_group.result(20).authorized_operations) == {
        AclOperation.DELETE,
        AclOperation.DESCRIBE,
    }
