"""ACLs over the wire on every backend: CreateAcls/DescribeAcls/DeleteAcls, and what a
PLAINTEXT client (User:ANONYMOUS) sees when ACLs allow or deny it.

Each expectation was first observed on real Kafka 4.1 (StandardAuthorizer) and holds
for the emulator too; run with ``--kafka-backend=emulator,kafka``.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from kafkatest import Broker
from kafkatest.brokers.acl_client import ANONYMOUS, Acl
from kafkatest.brokers.client import wait_until


def _name(hint: str) -> str:
    return f"acl-{hint}-{uuid.uuid4().hex[:8]}"


def _anonymous_admin(broker: Broker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap_servers})


def _produce_one(broker: Broker, topic: str, **config: Any) -> KafkaError | None:
    """Deliver one record as User:ANONYMOUS; the delivery error (None when written)."""
    outcome: list[KafkaError | None] = []
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "message.timeout.ms": 10000,
            **config,
        }
    )
    producer.produce(topic, b"v", on_delivery=lambda err, _msg: outcome.append(err))
    producer.flush(20)
    assert outcome, "the producer neither delivered nor failed"
    return outcome[0]


def test_acls_are_added_listed_and_removed(acl_broker: Broker) -> None:
    topic = _name("listed")
    acl_broker.allow("User:alice", "READ", topic=topic)
    acl_broker.allow("User:alice", "READ", group="spark-", pattern="PREFIXED")
    acl_broker.deny("User:bob", "ALL", topic="*", host="10.1.2.3")
    acl_broker.allow("User:carol", "IDEMPOTENT_WRITE", cluster=True)

    assert acl_broker.acls() == sorted(
        [
            Acl("User:alice", "READ", "ALLOW", "topic", topic),
            Acl("User:alice", "READ", "ALLOW", "group", "spark-", pattern="PREFIXED"),
            Acl("User:bob", "ALL", "DENY", "topic", "*", host="10.1.2.3"),
            Acl("User:carol", "IDEMPOTENT_WRITE", "ALLOW", "cluster", "kafka-cluster"),
        ]
    )
    assert len(acl_broker.remove_acls()) == 4
    assert acl_broker.acls() == []


def test_create_acls_refuses_what_kafka_refuses(acl_broker: Broker) -> None:
    admin = acl_broker.admin()
    bad = AclBinding(
        ResourceType.BROKER,
        "not-the-cluster",
        ResourcePatternType.LITERAL,
        "User:alice",
        "*",
        AclOperation.ALTER,
        AclPermissionType.ALLOW,
    )
    with pytest.raises(KafkaException) as raised:
        admin.create_acls([bad])[bad].result(timeout=20)
    error = raised.value.args[0]
    assert error.code() == KafkaError.INVALID_REQUEST
    assert "The only valid name for the CLUSTER resource is kafka-cluster" in error.str()


def test_a_principal_without_cluster_alter_cannot_manage_acls(acl_broker: Broker) -> None:
    anonymous = _anonymous_admin(acl_broker)
    binding = AclBinding(
        ResourceType.TOPIC,
        "t",
        ResourcePatternType.LITERAL,
        ANONYMOUS,
        "*",
        AclOperation.ALL,
        AclPermissionType.ALLOW,
    )
    with pytest.raises(KafkaException) as raised:
        anonymous.create_acls([binding])[binding].result(timeout=20)
    assert raised.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    assert acl_broker.acls() == []


def test_metadata_hides_topics_without_describe(acl_broker: Broker) -> None:
    hidden, readable = _name("hidden"), _name("readable")
    acl_broker.create_topic(hidden)
    acl_broker.create_topic(readable)
    acl_broker.allow(ANONYMOUS, "READ", topic=readable)  # READ implies DESCRIBE
    anonymous = _anonymous_admin(acl_broker)

    listed = anonymous.list_topics(timeout=20).topics
    assert readable in listed and hidden not in listed

    named = anonymous.list_topics(topic=hidden, timeout=20).topics[hidden]
    assert named.error is not None
    assert named.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert named.partitions == {}


def test_auto_creation_needs_create_on_the_topic_or_cluster(acl_broker: Broker) -> None:
    """A producer's Metadata asks for auto-creation: a topic the principal may
    describe but not create is refused (TOPIC_AUTHORIZATION_FAILED) and not created."""
    refused, created = _name("refused"), _name("created")
    acl_broker.allow(ANONYMOUS, "WRITE", topic=refused)
    acl_broker.allow(ANONYMOUS, "WRITE", topic=created)
    acl_broker.allow(ANONYMOUS, "CREATE", topic=created)

    denied = _produce_one(acl_broker, refused)
    assert denied is not None and denied.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert _produce_one(acl_broker, created) is None
    assert acl_broker.topic_exists(created)
    assert not acl_broker.topic_exists(refused)


def test_produce_needs_write_and_a_deny_beats_an_allow(acl_broker: Broker) -> None:
    topic = _name("produce")
    acl_broker.create_topic(topic)
    acl_broker.allow(ANONYMOUS, "DESCRIBE", topic=topic)
    refused = _produce_one(acl_broker, topic, **{"enable.idempotence": False})
    assert refused is not None and refused.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED

    acl_broker.allow("User:*", "WRITE", topic=topic)
    assert _produce_one(acl_broker, topic, **{"enable.idempotence": False}) is None

    acl_broker.deny(ANONYMOUS, "WRITE", topic=topic)
    denied = _produce_one(acl_broker, topic, **{"enable.idempotence": False})
    assert denied is not None and denied.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_an_idempotent_producer_needs_write_on_some_topic_not_idempotent_write(
    acl_broker: Broker,
) -> None:
    """KIP-679 (Kafka 3.0+): InitProducerId without a transactional id is allowed by
    IDEMPOTENT_WRITE on the cluster *or* WRITE on any topic."""
    topic = _name("idempotent")
    acl_broker.create_topic(topic)
    acl_broker.allow(ANONYMOUS, "WRITE", topic=topic)
    assert _produce_one(acl_broker, topic, **{"enable.idempotence": True}) is None


def test_an_idempotent_producer_without_any_write_fails_on_cluster_authorization(
    acl_broker: Broker,
) -> None:
    topic = _name("no-write")
    acl_broker.create_topic(topic)
    acl_broker.allow(ANONYMOUS, "DESCRIBE", topic=topic)
    fatal: list[KafkaError] = []
    producer = Producer(
        {
            "bootstrap.servers": acl_broker.bootstrap_servers,
            "enable.idempotence": True,
            "message.timeout.ms": 10000,
            "error_cb": lambda error: fatal.append(error) and None,
        }
    )
    producer.produce(topic, b"v")
    try:
        producer.flush(20)
    except KafkaException as exc:  # the fatal error surfaces from flush too
        fatal.append(exc.args[0])
    wait_until(lambda: producer.poll(0.1) is not None or bool(fatal), 20, "a fatal error")
    assert fatal[0].fatal()
    assert fatal[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED


def _consume(broker: Broker, topic: str, group: str, subscribe: bool) -> list[Any]:
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    """What the consumer reports (error codes and values) until it gets a record or
    a topic or group authorization error."""
    events: list[Any] = []
    enough = {KafkaError.TOPIC_AUTHORIZATION_FAILED}
    if subscribe:
        enough.add(KafkaError.GROUP_AUTHORIZATION_FAILED)
    try:
        if subscribe:
            consumer.subscribe([topic])
        else:
            consumer.assign([TopicPartition(topic, 0, 0)])
        for _ in range(60):
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            error = msg.error()
            events.append(error.code() if error else msg.value())
            if not error or error.code() in enough:
                break
    finally:
        consumer.close()
    return events


def test_a_group_member_needs_read_on_the_group_as_well_as_the_topic(acl_broker: Broker) -> None:
    topic, group = _name("consume"), _name("group")
    acl_broker.create_topic(topic)
    acl_broker.producer().produce(topic, b"hello")
    acl_broker.producer().flush(10)
    acl_broker.allow(ANONYMOUS, "READ", topic=topic)

    assert _consume(acl_broker, topic, group, subscribe=True)[-1] == (
        KafkaError.GROUP_AUTHORIZATION_FAILED
    )
    # Assigned partitions read from a given offset need no group: topic READ is
    # enough (librdkafka may also report the group's FindCoordinator refusal).
    assert _consume(acl_broker, topic, group, subscribe=False)[-1] == b"hello"

    acl_broker.allow(ANONYMOUS, "READ", group=group)
    assert _consume(acl_broker, topic, group, subscribe=True) == [b"hello"]


def test_fetch_without_read_is_refused_per_topic(acl_broker: Broker) -> None:
    topic = _name("no-read")
    acl_broker.create_topic(topic)
    acl_broker.producer().produce(topic, b"secret")
    acl_broker.producer().flush(10)
    acl_broker.allow(ANONYMOUS, "DESCRIBE", topic=topic)
    assert _consume(acl_broker, topic, _name("g"), subscribe=False)[-1] == (
        KafkaError.TOPIC_AUTHORIZATION_FAILED
    )


def test_prefixed_acls_cover_every_topic_with_the_prefix(acl_broker: Broker) -> None:
    prefix = _name("pre") + "-"
    acl_broker.create_topic(prefix + "a")
    acl_broker.allow(ANONYMOUS, "WRITE", topic=prefix, pattern="PREFIXED")
    assert _produce_one(acl_broker, prefix + "a") is None


def test_a_transactional_producer_needs_write_on_its_transactional_id(acl_broker: Broker) -> None:
    topic, txn = _name("txn"), _name("txn-id")
    acl_broker.create_topic(topic)
    acl_broker.allow(ANONYMOUS, "WRITE", topic=topic)
    config = {"bootstrap.servers": acl_broker.bootstrap_servers, "transactional.id": txn}
    with pytest.raises(KafkaException) as raised:
        Producer(config).init_transactions(20)
    assert raised.value.args[0].code() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED

    acl_broker.allow(ANONYMOUS, "WRITE", transactional_id=txn)
    producer = Producer(config)
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"committed")
    producer.commit_transaction(30)
    # The record and its commit marker (Kafka writes the marker just after EndTxn).
    wait_until(lambda: acl_broker.latest_offsets(topic) == {0: 2}, 30, "the commit marker")


def test_a_consumer_protocol_member_needs_read_on_the_group(acl_broker: Broker) -> None:
    topic, group = _name("kip848"), _name("kip848-group")
    acl_broker.create_topic(topic)
    acl_broker.allow(ANONYMOUS, "READ", topic=topic)
    consumer = Consumer(
        {
            "bootstrap.servers": acl_broker.bootstrap_servers,
            "group.id": group,
            "group.protocol": "consumer",
        }
    )
    try:
        consumer.subscribe([topic])
        error = None
        for _ in range(60):
            msg = consumer.poll(0.5)
            if msg is not None and msg.error():
                error = msg.error()
                break
    finally:
        consumer.close()
    assert error is not None and error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED


def test_an_acl_applies_only_to_its_host(acl_broker: Broker) -> None:
    """The ACL's host is compared with the client's address (here loopback)."""
    topic = _name("host")
    acl_broker.create_topic(topic)
    acl_broker.allow(ANONYMOUS, "WRITE", topic=topic, host="10.9.9.9")
    refused = _produce_one(acl_broker, topic)
    assert refused is not None and refused.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    acl_broker.allow(ANONYMOUS, "WRITE", topic=topic, host="127.0.0.1")
    assert _produce_one(acl_broker, topic) is None


def test_describe_and_delete_groups_need_describe_and_delete_on_the_group(
    acl_broker: Broker,
) -> None:
    group = _name("admin-group")
    anonymous = _anonymous_admin(acl_broker)
    described = anonymous.describe_consumer_groups([group])[group]
    with pytest.raises(KafkaException) as raised:
        described.result(timeout=20)
    assert raised.value.args[0].code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    deleted = anonymous.delete_consumer_groups([group])[group]
    with pytest.raises(KafkaException) as raised:
        deleted.result(timeout=20)
    assert raised.value.args[0].code() == KafkaError.GROUP_AUTHORIZATION_FAILED


def test_delete_groups_refuses_a_group_named_twice_once(acl_broker: Broker) -> None:
    """Kafka drops repeated group names before it authorizes them."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "emulator"))
    from kio.schema.delete_groups.v2.request import DeleteGroupsRequest
    from kio.schema.find_coordinator.v3.request import FindCoordinatorRequest
    from raw_client import ask

    denied, missing = _name("denied-group"), _name("missing-group")
    acl_broker.allow(ANONYMOUS, "DESCRIBE", group=missing)
    acl_broker.allow(ANONYMOUS, "DELETE", group=missing)
    # Kafka creates and loads its group coordinator on a first FindCoordinator.
    find = FindCoordinatorRequest(key=missing, key_type=0)
    wait_until(
        lambda: ask(acl_broker.bootstrap_servers, 10, 3, find).error_code == 0, 60, "a coordinator"
    )
    request = DeleteGroupsRequest(groups_names=(denied, missing, denied, missing))

    def answered() -> list[tuple[str, int]]:
        results = ask(acl_broker.bootstrap_servers, 42, 2, request).results
        return sorted((r.group_id, r.error_code) for r in results)

    loading = (KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS)
    wait_until(lambda: all(code not in loading for _, code in answered()), 60, "its loading")
    assert answered() == sorted(
        [
            (denied, KafkaError.GROUP_AUTHORIZATION_FAILED),
            (missing, KafkaError.GROUP_ID_NOT_FOUND),
        ]
    )


def test_client_quotas_need_describe_configs_and_alter_configs_on_the_cluster(
    acl_broker: Broker,
) -> None:
    """DescribeClientQuotas and AlterClientQuotas fail whole without the cluster right."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "emulator"))
    from kio.schema.alter_client_quotas.v1 import request as alter
    from kio.schema.describe_client_quotas.v1 import request as describe
    from kio.static.primitive import f64
    from raw_client import ask

    user = _name("quota-user")
    describe_request = describe.DescribeClientQuotasRequest(components=(), strict=False)
    alter_request = alter.AlterClientQuotasRequest(
        entries=(
            alter.EntryData(
                entity=(alter.EntityData(entity_type="user", entity_name=user),),
                ops=(alter.OpData(key="producer_byte_rate", value=f64(10.0), remove=False),),
            ),
        ),
        validate_only=True,
    )
    refused = ask(acl_broker.bootstrap_servers, 48, 1, describe_request)
    assert refused.error_code == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    assert refused.entries is None
    (entry,) = ask(acl_broker.bootstrap_servers, 49, 1, alter_request).entries
    assert entry.error_code == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    assert entry.error_message == "Cluster authorization failed."
    assert [(e.entity_type, e.entity_name) for e in entry.entity] == [("user", user)]

    acl_broker.allow(ANONYMOUS, "DESCRIBE_CONFIGS", cluster=True)
    acl_broker.allow(ANONYMOUS, "ALTER_CONFIGS", cluster=True)
    assert ask(acl_broker.bootstrap_servers, 48, 1, describe_request).error_code == 0
    wait_until(
        lambda: ask(acl_broker.bootstrap_servers, 49, 1, alter_request).entries[0].error_code == 0,
        timeout_s=20,
        what="AlterClientQuotas allowed",
    )


def test_describe_transactions_refuses_an_id_without_describe(acl_broker: Broker) -> None:
    """DescribeTransactions: an id without DESCRIBE gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    and the message's defaults (start time 0, producer id and epoch 0, no topics)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "emulator"))
    from kio.schema.describe_transactions.v0.request import DescribeTransactionsRequest
    from raw_client import ask

    denied = _name("txn-denied")
    answer = ask(
        acl_broker.bootstrap_servers,
        65,
        0,
        DescribeTransactionsRequest(transactional_ids=(denied,)),
    )
    assert [
        (
            s.transactional_id,
            s.error_code.name,
            s.transaction_state,
            s.transaction_timeout.total_seconds(),
            round(s.transaction_start_time.timestamp() * 1000),
            s.producer_id,
            s.producer_epoch,
            s.topics,
        )
        for s in answer.transaction_states
    ] == [(denied, "transactional_id_authorization_failed", "", 0.0, 0, 0, 0, ())]


_ANY_FILTER = {
    "resource_name_filter": None,
    "principal_filter": None,
    "host_filter": None,
}


@pytest.mark.parametrize(
    "unknown", ["resource_type_filter", "pattern_type_filter", "operation", "permission_type"]
)
def test_acl_requests_with_an_unknown_code_close_the_connection(
    acl_broker: Broker, unknown: str
) -> None:
    """Kafka's CreateAcls, DescribeAcls and DeleteAcls refuse a filter or creation with a
    code 0 (UNKNOWN) while parsing the request, so the broker closes the connection;
    the same request with known codes (1: ANY, 3: LITERAL / ALLOW) is answered."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "emulator"))
    from kio.schema.create_acls.v3 import request as create
    from kio.schema.delete_acls.v3 import request as delete
    from kio.schema.describe_acls.v3 import request as describe
    from kio.static.primitive import i8
    from raw_client import connect, encode, read_frame, request_frame

    known = {
        "resource_type_filter": i8(1),
        "pattern_type_filter": i8(1),
        "operation": i8(1),
        "permission_type": i8(1),
    }
    codes = {**known, unknown: i8(0)}
    creation_codes = {
        "resource_type": i8(2),
        "resource_pattern_type": i8(3),
        "operation": i8(3),
        "permission_type": i8(3),
    }
    creation_key = {
        "resource_type_filter": "resource_type",
        "pattern_type_filter": "resource_pattern_type",
        "operation": "operation",
        "permission_type": "permission_type",
    }[unknown]

    def creation(**codes_: Any) -> Any:
        return create.AclCreation(
            resource_name=_name("unknown"), principal="User:alice", host="*", **codes_
        )

    requests = {
        "describe": (
            29,
            describe.DescribeAclsRequest(**_ANY_FILTER, **known),
            describe.DescribeAclsRequest(**_ANY_FILTER, **codes),
        ),
        "delete": (
            31,
            delete.DeleteAclsRequest(filters=(delete.DeleteAclsFilter(**_ANY_FILTER, **known),)),
            delete.DeleteAclsRequest(filters=(delete.DeleteAclsFilter(**_ANY_FILTER, **codes),)),
        ),
        "create": (
            30,
            create.CreateAclsRequest(creations=()),
            create.CreateAclsRequest(
                creations=(creation(**{**creation_codes, creation_key: i8(0)}),)
            ),
        ),
    }

    def answered(api_key: int, request: Any) -> bool:
        with connect(acl_broker.bootstrap_servers) as sock:
            sock.sendall(request_frame(api_key, 3, 9, encode(request)))
            return read_frame(sock) is not None

    outcomes = {
        name: (answered(key, good), answered(key, bad))
        for name, (key, good, bad) in requests.items()
    }
    assert outcomes == {name: (True, False) for name in requests}
