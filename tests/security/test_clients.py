"""Real clients on secured listeners of every backend: confluent-kafka (librdkafka)
over SASL PLAIN and SCRAM, TLS and mutual TLS, and Kafka's own Java tools.
"""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from kafkatest import Broker
from kafkatest.apps.tools import TOPICS, run_kafka_tool
from kafkatest.security.tls import CertificateAuthority


def _round_trip(broker: Broker, config: dict, topic: str) -> list[bytes]:
    producer = Producer(config)
    producer.produce(topic, b"secret-1")
    producer.produce(topic, b"secret-2")
    assert producer.flush(30) == 0
    consumer = Consumer({**config, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(values) < 2 and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            values.append(message.value())
    consumer.close()
    return values


@pytest.mark.parametrize(
    ("listener", "mechanism"),
    [
        ("sasl_plaintext", "PLAIN"),
        ("sasl_plaintext", "SCRAM-SHA-256"),
        ("sasl_ssl", "SCRAM-SHA-512"),
        ("sasl_ssl", "PLAIN"),
    ],
)
def test_a_user_produces_and_consumes_with_its_client_config(
    secured: Callable[[str], Broker], listener: str, mechanism: str
) -> None:
    broker = secured(listener)
    topic = f"secured-{listener}-{mechanism}".lower()
    broker.create_topic(topic, partitions=1)

    config = broker.client_config("alice", mechanism=mechanism)

    assert config["sasl.mechanism"] == mechanism
    assert _round_trip(broker, config, topic) == [b"secret-1", b"secret-2"]


def _errors_of(config: dict) -> list[KafkaError]:
    errors: list[KafkaError] = []
    admin = AdminClient({**config, "error_cb": errors.append})
    with pytest.raises(KafkaException, match="Broker transport failure"):
        admin.list_topics(timeout=5)
    admin.poll(0)
    return errors


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_a_wrong_password_is_reported_as_an_authentication_error(
    secured: Callable[[str], Broker], mechanism: str
) -> None:
    broker = secured("sasl_ssl")
    config = {**broker.client_config("alice", mechanism=mechanism), "sasl.password": "wrong"}

    errors = [e for e in _errors_of(config) if e.code() == KafkaError._AUTHENTICATION]

    assert errors, "librdkafka saw no authentication error"
    expected = (
        "Authentication failed: Invalid username or password"
        if mechanism == "PLAIN"
        else "Authentication failed during authentication due to invalid credentials with "
        "SASL mechanism SCRAM-SHA-512"
    )
    assert expected in errors[0].str()


def test_a_client_that_does_not_trust_the_broker_fails_its_tls_handshake(
    secured: Callable[[str], Broker], tmp_path: Path
) -> None:
    broker = secured("sasl_ssl")
    other_ca = CertificateAuthority(tmp_path / "other")
    config = {**broker.client_config("alice"), "ssl.ca.location": str(other_ca.ca_pem)}

    errors = _errors_of(config)

    assert any(e.code() == KafkaError._SSL for e in errors), errors
    assert "certificate verify failed" in errors[0].str()


def test_mutual_tls_needs_a_client_certificate(secured: Callable[[str], Broker]) -> None:
    broker = secured("mtls")
    topic = "mtls-topic"
    broker.create_topic(topic, partitions=1)
    config = broker.client_config("alice")
    assert config["ssl.certificate.location"].endswith(".pem")

    assert _round_trip(broker, config, topic) == [b"secret-1", b"secret-2"]

    without = {
        k: v for k, v in config.items() if k not in ("ssl.certificate.location", "ssl.key.location")
    }
    # The TLS handshake fails (TLS 1.3 reports it to the client as a closed
    # connection), so no request is ever answered.
    assert _errors_of(without)


def test_tls_without_a_client_certificate_and_with_one_when_it_is_requested(
    secured: Callable[[str], Broker],
) -> None:
    """ssl.client.auth=requested: a plain SSL client (no certificate) and one with a
    certificate both produce and consume."""
    broker = secured("ssl_requested")
    topic = "ssl-requested-topic"
    broker.create_topic(topic, partitions=1)
    broker.create_topic(f"{topic}-2", partitions=1)
    config = broker.client_config("alice")
    assert config["security.protocol"] == "SSL"
    plain = {
        k: v for k, v in config.items() if k not in ("ssl.certificate.location", "ssl.key.location")
    }
    assert "ssl.ca.location" in plain
    assert _round_trip(broker, plain, topic) == [b"secret-1", b"secret-2"]
    assert config["ssl.certificate.location"].endswith(".pem")  # alice's certificate
    assert _round_trip(broker, config, f"{topic}-2") == [b"secret-1", b"secret-2"]


def test_kafka_tools_use_the_brokers_java_client_properties(
    secured: Callable[[str], Broker], tmp_path: Path
) -> None:
    broker = secured("sasl_ssl")
    broker.create_topic("tool-visible", partitions=1)
    properties = broker.java_client_properties(tmp_path / "alice.properties", "alice")

    result = run_kafka_tool(
        TOPICS,
        [
            "--bootstrap-server",
            broker.bootstrap_servers,
            "--command-config",
            str(properties),
            "--list",
        ],
    )

    assert result.returncode == 0, result.stderr
    assert "tool-visible" in result.stdout.split()


def test_the_server_certificate_names_the_loopback_hosts(secured: Callable[[str], Broker]) -> None:
    broker = secured("sasl_ssl")
    runtime = broker.security_runtime
    assert runtime is not None and runtime.ca is not None
    host, port = broker.bootstrap_servers.rsplit(":", 1)
    context = ssl.create_default_context(cafile=str(runtime.ca.ca_pem))
    for name in ("127.0.0.1", "localhost"):
        with (
            socket.create_connection((host, int(port)), timeout=10) as raw,
            context.wrap_socket(raw, server_hostname=name) as tls,
        ):
            assert tls.version() in ("TLSv1.2", "TLSv1.3")
