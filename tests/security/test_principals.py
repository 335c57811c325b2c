"""The principal a connection authenticates as, seen through ACLs on every backend:
``User:<name>`` for SASL, ``User:`` + the certificate's subject DN (RFC 2253, most
specific first) for mutual TLS, as Kafka's DefaultKafkaPrincipalBuilder makes them."""

from __future__ import annotations

from collections.abc import Callable

from confluent_kafka import Producer

from kafkatest import Broker


def _produce_error(config: dict, topic: str) -> str | None:
    outcome: list = []
    producer = Producer({**config, "message.timeout.ms": 10000})
    producer.produce(topic, b"v", on_delivery=lambda err, msg: outcome.append(err))
    producer.flush(20)
    assert outcome, "no delivery report"
    return None if outcome[0] is None else outcome[0].name()


def test_a_sasl_user_is_user_colon_name(secured: Callable[[str], Broker]) -> None:
    broker = secured("sasl_acls")
    topic = f"principal-sasl-{broker.backend}"
    broker.create_topic(topic, partitions=1)

    broker.allow("User:alice", "WRITE", topic=topic)

    assert _produce_error(broker.client_config("alice"), topic) is None
    assert _produce_error(broker.client_config("bob"), topic) == "TOPIC_AUTHORIZATION_FAILED"


def test_a_client_certificate_is_its_subject_dn(secured: Callable[[str], Broker]) -> None:
    broker = secured("mtls_acls")
    runtime = broker.security_runtime
    assert runtime is not None
    alice = runtime.client_certificate("alice").principal
    assert alice == "User:CN=alice,O=kafkatest"
    topic = f"principal-mtls-{broker.backend}"
    broker.create_topic(topic, partitions=1)

    broker.allow(alice, "WRITE", topic=topic)

    assert _produce_error(broker.client_config("alice"), topic) is None
    assert _produce_error(broker.client_config("bob"), topic) == "TOPIC_AUTHORIZATION_FAILED"
