"""kafkatest's own clients get their rights by logging in, not by what they send.

With ACLs on, the harness (seeding, sink readers, `allow`, `remove_acls`) must act
as a super user. On Kafka that takes a login: a SASL/PLAIN listener of the
harness's own where it is User:kafkatest. A value every request carries in clear,
such as its client id, must give nothing: a client that copies the harness's
client id onto the ordinary listener is User:ANONYMOUS like any other. Each
expectation holds on both backends (``--kafka-backend=emulator,kafka``).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from kafkatest import Broker, start_broker
from kafkatest.brokers.acl_client import ADMIN_PRINCIPAL, ANONYMOUS
from kafkatest.records import Record


def _name(hint: str) -> str:
    return f"harness-{hint}-{uuid.uuid4().hex[:8]}"


def _impostor(broker: Broker, **extra: Any) -> dict[str, Any]:
    """The ordinary listener, with everything of the harness's settings a client can
    copy without knowing its login: the client id."""
    return {
        "bootstrap.servers": broker.bootstrap_servers,
        "client.id": broker.client_config()["client.id"],
        **extra,
    }


def test_the_harness_s_client_id_gives_no_rights_on_the_ordinary_listener(
    acl_broker: Broker,
) -> None:
    existing, wanted = _name("existing"), _name("wanted")
    acl_broker.create_topic(existing)
    impostor = AdminClient(_impostor(acl_broker))

    created = impostor.create_topics([NewTopic(wanted, 1, 1)])[wanted]
    with pytest.raises(KafkaException) as refused:
        created.result(timeout=20)
    assert refused.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert not acl_broker.topic_exists(wanted)

    grant = AclBinding(
        ResourceType.TOPIC,
        existing,
        ResourcePatternType.LITERAL,
        ANONYMOUS,
        "*",
        AclOperation.ALL,
        AclPermissionType.ALLOW,
    )
    with pytest.raises(KafkaException) as refused:
        impostor.create_acls([grant])[grant].result(timeout=20)
    assert refused.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    assert acl_broker.acls() == []

    assert existing not in impostor.list_topics(timeout=20).topics

    outcome: list[KafkaError | None] = []
    producer = Producer(_impostor(acl_broker, **{"message.timeout.ms": 10000}))
    producer.produce(existing, b"v", on_delivery=lambda err, _msg: outcome.append(err))
    producer.flush(20)
    assert outcome and outcome[0] is not None
    assert outcome[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert acl_broker.latest_offsets(existing) == {0: 0}


def test_the_harness_logs_in_as_a_super_user_that_denies_do_not_bind(
    acl_broker: Broker,
) -> None:
    """Super users pass even a DENY (Kafka's super.users): the harness keeps working
    under ACLs that shut out both its principal and User:ANONYMOUS."""
    config = acl_broker.client_config()
    assert config["security.protocol"] == "SASL_PLAINTEXT"
    assert f"User:{config['sasl.username']}" == ADMIN_PRINCIPAL
    assert config["bootstrap.servers"] != acl_broker.bootstrap_servers

    topic = _name("denied")
    for principal in (ADMIN_PRINCIPAL, ANONYMOUS):
        acl_broker.deny(principal, "ALL", topic="*")
        acl_broker.deny(principal, "ALL", cluster=True)
    acl_broker.create_topic(topic)
    acl_broker.produce([Record(topic, b"v", b"k")])
    assert acl_broker.latest_offsets(topic) == {0: 1}
    assert len(acl_broker.acls()) == 4
    assert len(acl_broker.remove_acls()) == 4


#: What a local process could try: the passwords the kafka backend once wrote in its
#: source for its two super users (kafkatest's clients and the broker itself).
_GUESSES = (
    ("kafkatest", "kafkatest-admin-secret"),
    ("kafkatest-broker", "kafkatest-broker-secret"),
    ("kafkatest", "kafkatest"),
)


def test_the_harness_s_login_cannot_be_guessed(acl_broker: Broker) -> None:
    """The super users' passwords are drawn per broker: a guessed or once-published
    one is refused on the harness's listener, and the harness's own still works."""
    harness = acl_broker.client_config()
    assert harness["sasl.password"] not in {password for _, password in _GUESSES}
    for user, password in _GUESSES:
        errors: list[KafkaError] = []
        impostor = AdminClient(
            {
                **harness,
                "sasl.username": user,
                "sasl.password": password,
                "client.id": "impostor",
                "error_cb": errors.append,
            }
        )
        for _ in range(80):  # the client reports the refusal through error_cb, on poll
            if errors:
                break
            impostor.poll(0.25)
        assert any(e.code() == KafkaError._AUTHENTICATION for e in errors), (
            f"{user}/{password!r}: {errors}"
        )
        with pytest.raises(KafkaException):  # refused: its requests find no broker
            impostor.list_topics(timeout=0.5)
    assert AdminClient(harness).list_topics(timeout=20).brokers


def test_each_listener_advertises_its_own_addresses(acl_broker: Broker) -> None:
    """Metadata answers with the brokers' addresses on the listener it came in on, so
    the harness's clients stay on their listener and everyone else on theirs."""
    harness = acl_broker.client_config()
    harness_brokers = AdminClient(harness).list_topics(timeout=20).brokers.values()
    assert {f"{b.host}:{b.port}" for b in harness_brokers} == set(
        harness["bootstrap.servers"].split(",")
    )
    ordinary = AdminClient({"bootstrap.servers": acl_broker.bootstrap_servers})
    ordinary_brokers = ordinary.list_topics(timeout=20).brokers.values()
    assert {f"{b.host}:{b.port}" for b in ordinary_brokers} == set(
        acl_broker.bootstrap_servers.split(",")
    )


def _consume_as_harness(broker: Broker, topic: str, count: int) -> list[bytes | None]:
    """Read `count` records in a group of the harness's own: FindCoordinator must name
    the coordinator's harness listener, or the join arrives as User:ANONYMOUS."""
    consumer = Consumer(
        {
            **broker.client_config(),
            "group.id": _name("group"),
            "auto.offset.reset": "earliest",
        }
    )
    values: list[bytes | None] = []
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 30
        while len(values) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            assert message.error() is None, message.error()
            values.append(message.value())
    finally:
        consumer.close()
    return values


def test_a_cluster_s_harness_reaches_every_broker_on_its_own_listener() -> None:
    """Emulator only: the kafka backend runs ACLs on one node. With three brokers the
    harness's clients follow Metadata and FindCoordinator to other brokers; named by
    their ordinary listener, those would see the harness as User:ANONYMOUS and refuse
    it. A broker restarted keeps its harness listener where it was."""
    broker = start_broker("emulator", brokers=3, acls=True)
    try:
        topic = _name("spread")
        broker.create_topic(topic, partitions=3)
        broker.produce([Record(topic, b"before", partition=p) for p in range(3)])
        assert broker.latest_offsets(topic) == {0: 1, 1: 1, 2: 1}
        harness_servers = broker.client_config()["bootstrap.servers"]

        broker.stop_node(2)
        broker.start_node(2)
        assert broker.client_config()["bootstrap.servers"] == harness_servers
        broker.produce([Record(topic, b"after", partition=p) for p in range(3)])
        assert sorted(v or b"" for v in _consume_as_harness(broker, topic, 6)) == sorted(
            [b"before"] * 3 + [b"after"] * 3
        )
    finally:
        broker.close()
