"""Delegation token requests that are refused, on every backend.

A broker without ``delegation.token.secret.key`` (Kafka's default; kafkatest sets
one only where SCRAM is on) has tokens disabled. A client that authenticated (a
client certificate here) hears that from the controller:
DELEGATION_TOKEN_AUTH_DISABLED, timestamps 0. One that did not (TLS without a
client certificate) is refused by the broker first:
DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, timestamps -1. Observed on Kafka 4.1.1.
Tokens that are served: test_delegation_tokens.py.
"""

from __future__ import annotations

import datetime
import socket
import struct
from collections.abc import Callable
from typing import Any

from kio.schema.errors import ErrorCode
from sasl_wire import connect, read_frame, request, send

from kafkatest import Broker

CREATE, RENEW, EXPIRE, DESCRIBE = 38, 39, 40, 41


def _signed_in(broker: Broker) -> tuple[socket.socket, str]:
    """A mutual-TLS connection as alice (no SCRAM there: tokens are off), and her name."""
    import ssl

    runtime = broker.security_runtime
    assert runtime is not None and runtime.ca is not None
    alice = runtime.client_certificate("alice")
    context = ssl.create_default_context(cafile=str(runtime.ca.ca_pem))
    context.load_cert_chain(str(alice.cert_pem), str(alice.key_pem))
    host, port = broker.bootstrap_servers.split(",")[0].rsplit(":", 1)
    raw = socket.create_connection((host, int(port)), timeout=10)
    return context.wrap_socket(raw, server_hostname=host), alice.principal.partition(":")[2]


def _body(sock: socket.socket, api_key: int, version: int, entity: Any) -> bytes:
    """The raw response body: kio cannot decode these answers' -1 timestamps."""
    send(sock, api_key, version, entity, 3)
    reply = read_frame(sock)
    assert reply is not None and struct.unpack(">i", reply[:4])[0] == 3
    flexible = version >= 2
    return reply[5:] if flexible else reply[4:]


def _compact(text: str) -> bytes:
    return bytes([len(text) + 1]) + text.encode()


def _create(owner: str | None = None, renewer_type: str = "User") -> Any:
    renewers = ()
    if renewer_type != "User":
        from kio.schema.create_delegation_token.v3.request import CreatableRenewers

        renewers = (CreatableRenewers(principal_type=renewer_type, principal_name="x"),)
    return request(
        "create_delegation_token",
        3,
        owner_principal_type="User" if owner else None,
        owner_principal_name=owner,
        renewers=renewers,
        max_lifetime=datetime.timedelta(milliseconds=-1),
    )


def _created(error: ErrorCode, owner: str, requester: str, time: bytes) -> bytes:
    return (
        struct.pack(">h", error.value)
        + _compact("User")
        + _compact(owner)
        + _compact("User")
        + _compact(requester)
        + time * 3
        + _compact("")
        + b"\x01"
        + b"\0\0\0\0\0"
    )


ZERO, NONE = b"\0" * 8, b"\xff" * 8


def test_an_authenticated_client_hears_that_tokens_are_disabled(
    secured: Callable[[str], Broker],
) -> None:
    broker = secured("mtls")
    disabled = ErrorCode.delegation_token_auth_disabled
    sock, alice = _signed_in(broker)
    with sock:
        assert _body(sock, CREATE, 3, _create()) == _created(disabled, alice, alice, ZERO)
        assert _body(sock, CREATE, 3, _create("bob")) == _created(disabled, "bob", alice, ZERO)
        renew = request(
            "renew_delegation_token", 2, hmac=b"abc", renew_period=datetime.timedelta(seconds=1)
        )
        assert _body(sock, RENEW, 2, renew) == b"\0\x3d" + ZERO + b"\0\0\0\0\0"
        expire = request(
            "expire_delegation_token",
            2,
            hmac=b"abc",
            expiry_time_period=datetime.timedelta(seconds=1),
        )
        assert _body(sock, EXPIRE, 2, expire) == b"\0\x3d" + ZERO + b"\0\0\0\0\0"
        describe = request("describe_delegation_token", 3, owners=None)
        assert _body(sock, DESCRIBE, 3, describe) == b"\0\x3d" + b"\x01" + b"\0\0\0\0\0"


def test_renewers_must_be_users(secured: Callable[[str], Broker]) -> None:
    """The broker checks the renewers' type before it asks the controller."""
    sock, alice = _signed_in(secured("mtls"))
    with sock:
        answer = _body(sock, CREATE, 3, _create(renewer_type="Group"))
    assert answer == _created(ErrorCode.invalid_principal_type, alice, alice, NONE)


def test_tls_without_a_client_certificate_may_not_ask_for_tokens(
    secured: Callable[[str], Broker],
) -> None:
    with connect(secured("ssl_requested")) as sock:
        answer = _body(sock, CREATE, 3, _create())
    assert answer == _created(
        ErrorCode.delegation_token_request_not_allowed, "ANONYMOUS", "ANONYMOUS", NONE
    )


def test_a_token_for_another_owner_needs_create_tokens_on_that_user(
    secured: Callable[[str], Broker],
) -> None:
    """With ACLs, Kafka asks for CREATE_TOKENS on the owner (User:bob) before it
    asks the controller; a client certificate may ask for tokens at all. (Without
    ACLs the request reaches the controller: the SASL test above.)"""
    import ssl

    broker = secured("mtls_acls")
    runtime = broker.security_runtime
    assert runtime is not None and runtime.ca is not None
    alice = runtime.client_certificate("alice")
    context = ssl.create_default_context(cafile=str(runtime.ca.ca_pem))
    context.load_cert_chain(str(alice.cert_pem), str(alice.key_pem))
    host, port = broker.bootstrap_servers.split(",")[0].rsplit(":", 1)
    requester = alice.principal.partition(":")[2]

    def create_for_bob() -> bytes:
        raw = socket.create_connection((host, int(port)), timeout=10)
        with context.wrap_socket(raw, server_hostname=host) as sock:
            return _body(sock, CREATE, 3, _create("bob"))

    assert create_for_bob() == _created(
        ErrorCode.delegation_token_authorization_failed, "bob", requester, NONE
    )
