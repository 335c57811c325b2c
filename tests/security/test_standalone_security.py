"""`kafkatest emulator` with security flags, as a user outside pytest runs it."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer
from kio.schema.errors import ErrorCode

from kafkatest.apps.tools import TOPICS, run_kafka_tool
from kafkatest.security.tls import TRUSTSTORE_PASSWORD
from tests.standalone_emulator import standalone_emulator


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def standalone(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    tls = tmp_path / "tls"
    with standalone_emulator(
        "--security-protocol", "SASL_SSL", "--sasl-mechanism", "SCRAM-SHA-512",
        "--user", "alice:alice-secret", "--tls-dir", str(tls),
        banner_lines=3,
    ) as (bootstrap, lines):  # fmt: skip
        assert "security.protocol=SASL_SSL sasl.mechanisms=SCRAM-SHA-512 users: alice" in lines[1]
        assert str(tls / "ca.pem") in lines[2] and str(tls / "truststore.p12") in lines[2]
        yield bootstrap, tls


def test_standalone_serves_scram_over_tls_with_its_ca(standalone: tuple[str, Path]) -> None:
    bootstrap, tls = standalone
    config = {
        "bootstrap.servers": bootstrap,
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "alice",
        "sasl.password": "alice-secret",
        "ssl.ca.location": str(tls / "ca.pem"),
    }
    producer = Producer(config)
    producer.produce("standalone-topic", b"v")
    assert producer.flush(30) == 0


def test_standalone_refuses_a_wrong_password_at_once(standalone: tuple[str, Path]) -> None:
    import ssl

    from sasl_wire import closed, receive, request, send

    bootstrap, tls = standalone
    host, port = bootstrap.rsplit(":", 1)
    context = ssl.create_default_context(cafile=str(tls / "ca.pem"))
    with context.wrap_socket(
        socket.create_connection((host, int(port)), timeout=10), server_hostname=host
    ) as sock:
        send(sock, 17, 1, request("sasl_handshake", 1, mechanism="SCRAM-SHA-512"))
        assert receive(sock, 17, 1).error_code == ErrorCode.none
        send(sock, 36, 2, request("sasl_authenticate", 2, auth_bytes=b"n,,n=alice,r=abc"), 2)
        first = receive(sock, 36, 2)
        nonce = dict(p.split("=", 1) for p in bytes(first.auth_bytes).decode().split(","))["r"]
        final = f"c=biws,r={nonce},p={'A' * 86}==".encode()  # 64 bytes, from no password
        send(sock, 36, 2, request("sasl_authenticate", 2, auth_bytes=final), 3)
        answer = receive(sock, 36, 2)
        assert answer.error_code == ErrorCode.sasl_authentication_failed
        assert closed(sock)


def test_the_jvm_truststore_works_for_kafka_tools(
    standalone: tuple[str, Path], tmp_path: Path
) -> None:
    bootstrap, tls = standalone
    properties = tmp_path / "client.properties"
    properties.write_text(
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="alice" password="alice-secret";\n'
        "ssl.truststore.type=PKCS12\n"
        f"ssl.truststore.location={tls / 'truststore.p12'}\n"
        f"ssl.truststore.password={TRUSTSTORE_PASSWORD}\n"
    )
    result = run_kafka_tool(
        TOPICS,
        ["--bootstrap-server", bootstrap, "--command-config", str(properties), "--create",
         "--topic", "from-the-jvm", "--partitions", "1"],
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Created topic from-the-jvm." in result.stdout
