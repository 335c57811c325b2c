"""ACLs per authenticated user: SASL_PLAINTEXT (PLAIN) logins are the principals
ACLs name, on every backend. alice may write the topic; bob may not."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import KafkaError, Producer

from kafkatest import Broker, start_broker
from kafkatest.pytest_plugin import selected_backends

USERS = {"alice": "alice-secret", "bob": "bob-secret"}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "sasl_acl_broker" in metafunc.fixturenames:
        metafunc.parametrize(
            "sasl_acl_broker", selected_backends(metafunc.config), indirect=True, scope="module"
        )


@pytest.fixture(scope="module")
def sasl_acl_broker(request: pytest.FixtureRequest) -> Iterator[Broker]:
    broker = start_broker(
        request.param,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanisms=["PLAIN"],
        users=USERS,
        acls=True,
    )
    try:
        yield broker
    finally:
        broker.close()


def _produce_as(broker: Broker, user: str, topic: str) -> KafkaError | None:
    outcome: list[KafkaError | None] = []
    producer = Producer({**broker.client_config(user), "message.timeout.ms": 10000})
    producer.produce(topic, b"v", on_delivery=lambda err, _msg: outcome.append(err))
    producer.flush(20)
    assert outcome, "the producer neither delivered nor failed"
    return outcome[0]


def test_acls_name_the_authenticated_user(sasl_acl_broker: Broker) -> None:
    topic = f"acl-users-{uuid.uuid4().hex[:8]}"
    sasl_acl_broker.create_topic(topic)
    sasl_acl_broker.allow("User:alice", "WRITE", topic=topic)
    sasl_acl_broker.allow("User:bob", "DESCRIBE", topic=topic)

    assert _produce_as(sasl_acl_broker, "alice", topic) is None
    refused = _produce_as(sasl_acl_broker, "bob", topic)
    assert refused is not None and refused.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    # kafkatest's own reads act as a super user whatever the ACLs say.
    assert sasl_acl_broker.latest_offsets(topic) == {0: 1}

    sasl_acl_broker.allow("User:*", "WRITE", topic=topic)
    sasl_acl_broker.deny("User:alice", "WRITE", topic=topic)
    refused = _produce_as(sasl_acl_broker, "alice", topic)
    assert refused is not None and refused.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert _produce_as(sasl_acl_broker, "bob", topic) is None
