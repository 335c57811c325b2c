"""The SASL exchange as Kafka's SaslServerAuthenticator runs it, on every backend.

Expected values are Kafka 4.1's (SaslServerAuthenticator, PlainSaslServer,
ScramSaslServer, KafkaApis); each test runs on the emulator and on real Kafka.
"""

from __future__ import annotations

from collections.abc import Callable

from kio.schema.errors import ErrorCode
from sasl_wire import closed, connect, receive, request, send

from kafkatest import Broker

HANDSHAKE, AUTHENTICATE, METADATA, API_VERSIONS = 17, 36, 3, 18


def _handshake(sock, mechanism: str, version: int = 1):
    send(sock, HANDSHAKE, version, request("sasl_handshake", version, mechanism=mechanism))
    return receive(sock, HANDSHAKE, version)


def _authenticate(sock, token: bytes, correlation_id: int = 2):
    send(sock, AUTHENTICATE, 2, request("sasl_authenticate", 2, auth_bytes=token), correlation_id)
    return receive(sock, AUTHENTICATE, 2)


def test_a_wrong_plain_password_gets_kafkas_message_and_the_connection_closes(
    secured: Callable[[str], Broker],
) -> None:
    with connect(secured("sasl_plaintext")) as sock:
        handshake = _handshake(sock, "PLAIN")
        assert handshake.error_code == ErrorCode.none
        # Kafka lists them in Java HashSet order, not as configured.
        assert list(handshake.mechanisms) == ["PLAIN", "SCRAM-SHA-512", "SCRAM-SHA-256"]

        answer = _authenticate(sock, b"\0alice\0wrong")

        assert answer.error_code == ErrorCode.sasl_authentication_failed
        assert answer.error_message == "Authentication failed: Invalid username or password"
        assert closed(sock)


def test_plain_token_rules(secured: Callable[[str], Broker]) -> None:
    cases = {
        b"alice\0alice-secret": "Invalid SASL/PLAIN response: expected 3 tokens, got 2",
        b"\0\0alice-secret": "Authentication failed: username not specified",
        b"\0alice\0": "Authentication failed: password not specified",
        b"bob\0alice\0alice-secret": "Authentication failed: Client requested an authorization "
        "id that is different from username",
    }
    for token, message in cases.items():
        with connect(secured("sasl_plaintext")) as sock:
            _handshake(sock, "PLAIN")
            answer = _authenticate(sock, token)
            assert (answer.error_code, answer.error_message) == (
                ErrorCode.sasl_authentication_failed,
                message,
            ), token
            assert closed(sock)


def test_a_right_plain_password_authenticates_and_then_requests_are_served(
    secured: Callable[[str], Broker],
) -> None:
    with connect(secured("sasl_plaintext")) as sock:
        _handshake(sock, "PLAIN")
        answer = _authenticate(sock, b"\0alice\0alice-secret")
        assert answer.error_code == ErrorCode.none
        assert answer.error_message == ""
        assert bytes(answer.auth_bytes) == b""
        assert answer.session_lifetime.total_seconds() == 0

        send(
            sock,
            METADATA,
            12,
            request(
                "metadata",
                12,
                topics=(),
                allow_auto_topic_creation=False,
                include_topic_authorized_operations=False,
            ),
            3,
        )
        metadata = receive(sock, METADATA, 12)
        assert metadata is not None and len(metadata.brokers) >= 1

        # A second handshake after authentication: KafkaApis' ILLEGAL_SASL_STATE.
        again = _handshake(sock, "PLAIN")
        assert again.error_code == ErrorCode.illegal_sasl_state
        send(sock, AUTHENTICATE, 2, request("sasl_authenticate", 2, auth_bytes=b"x"), 5)
        late = receive(sock, AUTHENTICATE, 2)
        assert late.error_code == ErrorCode.illegal_sasl_state
        assert (
            late.error_message
            == "SaslAuthenticate request received after successful authentication"
        )


def test_scram_hides_whether_the_user_exists(secured: Callable[[str], Broker]) -> None:
    with connect(secured("sasl_plaintext")) as sock:
        _handshake(sock, "SCRAM-SHA-512")
        answer = _authenticate(sock, b"n,,n=nobody,r=abcdefgh")
        assert answer.error_code == ErrorCode.sasl_authentication_failed
        assert answer.error_message == (
            "Authentication failed during authentication due to invalid credentials "
            "with SASL mechanism SCRAM-SHA-512"
        )
        assert closed(sock)


def test_scram_first_message_for_a_known_user_gets_salt_and_iterations(
    secured: Callable[[str], Broker],
) -> None:
    with connect(secured("sasl_plaintext")) as sock:
        _handshake(sock, "SCRAM-SHA-256")
        answer = _authenticate(sock, b"n,,n=alice,r=clientnonce")
        assert answer.error_code == ErrorCode.none
        fields = dict(part.split("=", 1) for part in bytes(answer.auth_bytes).decode().split(","))
        assert fields["r"].startswith("clientnonce") and len(fields["r"]) > len("clientnonce")
        assert fields["i"] == "4096"
        assert fields["s"]


def test_a_request_before_authentication_closes_the_connection_unanswered(
    secured: Callable[[str], Broker],
) -> None:
    with connect(secured("sasl_plaintext")) as sock:
        send(
            sock,
            METADATA,
            12,
            request(
                "metadata",
                12,
                topics=(),
                allow_auto_topic_creation=False,
                include_topic_authorized_operations=False,
            ),
        )
        assert closed(sock)


def test_api_versions_is_served_once_before_the_handshake(secured: Callable[[str], Broker]) -> None:
    versions = request("api_versions", 3, client_software_name="t", client_software_version="1")
    with connect(secured("sasl_plaintext")) as sock:
        send(sock, API_VERSIONS, 3, versions)
        answer = receive(sock, API_VERSIONS, 3)
        assert answer.error_code == ErrorCode.none
        keys = {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}
        assert keys[HANDSHAKE] == (0, 1) and keys[AUTHENTICATE] == (0, 2)
        send(sock, API_VERSIONS, 3, versions, 2)
        assert closed(sock)


def test_an_unknown_mechanism_is_refused_with_the_enabled_list_then_closed(
    secured: Callable[[str], Broker],
) -> None:
    with connect(secured("sasl_ssl")) as sock:
        answer = _handshake(sock, "GSSAPI")
        assert answer.error_code == ErrorCode.unsupported_sasl_mechanism
        assert list(answer.mechanisms) == ["SCRAM-SHA-512", "PLAIN"]
        assert closed(sock)


def test_handshake_v0_then_raw_plain_token(secured: Callable[[str], Broker]) -> None:
    import struct

    with connect(secured("sasl_plaintext")) as sock:
        assert _handshake(sock, "PLAIN", version=0).error_code == ErrorCode.none
        token = b"\0alice\0alice-secret"
        sock.sendall(struct.pack(">i", len(token)) + token)
        from sasl_wire import read_frame

        assert read_frame(sock) == b""  # an empty size-prefixed server token
    with connect(secured("sasl_plaintext")) as sock:
        _handshake(sock, "PLAIN", version=0)
        token = b"\0alice\0wrong"
        sock.sendall(struct.pack(">i", len(token)) + token)
        assert closed(sock)  # no Kafka response can carry the error in v0


def test_a_handshake_on_a_plaintext_listener_is_an_illegal_state(kafka_broker: Broker) -> None:
    with connect(kafka_broker) as sock:
        assert _handshake(sock, "PLAIN").error_code == ErrorCode.illegal_sasl_state


def test_another_request_during_the_exchange_is_an_illegal_sasl_state_then_closed(
    secured: Callable[[str], Broker],
) -> None:
    with connect(secured("sasl_plaintext")) as sock:
        _handshake(sock, "SCRAM-SHA-256")
        send(sock, 60, 0, request("describe_cluster", 0, include_cluster_authorized_operations=False), 2)  # fmt: skip
        answer = receive(sock, 60, 0)
        assert answer is not None
        assert answer.error_code == ErrorCode.illegal_sasl_state
        assert answer.error_message == (
            "Unexpected Kafka request of type DESCRIBE_CLUSTER during SASL authentication."
        )
        assert closed(sock)


def test_oversized_or_garbage_frames_before_authentication_cost_only_their_connection(
    secured: Callable[[str], Broker],
) -> None:
    import struct

    broker = secured("sasl_plaintext")
    # Kafka's sasl.server.max.receive.size (512 KiB) bounds an unauthenticated frame.
    with connect(broker) as sock:
        sock.sendall(struct.pack(">i", 600 * 1024) + b"\0" * 1024)
        assert closed(sock)
    # A frame that is no Kafka request (here: a few random bytes).
    with connect(broker) as sock:
        sock.sendall(struct.pack(">i", 6) + b"\x16\x03\x01\x02\x00\x01")
        assert closed(sock)
    # A SCRAM token that is not UTF-8 is a failed login, not a crash.
    with connect(broker) as sock:
        _handshake(sock, "SCRAM-SHA-512")
        answer = _authenticate(sock, b"\xff\xfe\xfd")
        assert answer.error_code == ErrorCode.sasl_authentication_failed
        assert closed(sock)
    with connect(broker) as sock:
        _handshake(sock, "PLAIN")
        assert _authenticate(sock, b"\0alice\0alice-secret").error_code == ErrorCode.none
