"""CreateDelegationToken over the wire, as a user: how the harness gets a token.

Neither confluent-kafka nor librdkafka can ask for delegation tokens, and starting
Kafka's DelegationTokenCommand (a JVM) for each token would cost seconds, so the
harness speaks the few requests itself: SaslHandshake, SaslAuthenticate (PLAIN,
or SCRAM as RFC 5802's client) and CreateDelegationToken v3, on one connection
logged in as the token's owner, the same on every backend.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import hashlib
import hmac
import io
import secrets
import socket
import ssl
import struct
from collections.abc import Iterator
from typing import Any

import kafkatest.kio_codec  # noqa: F401 - kio without its hypothesis hooks
from kafkatest.brokers.client_waits import retry
from kafkatest.errors import BrokerError
from kafkatest.security import DelegationToken
from kafkatest.security_names import SCRAM_MECHANISMS

_HANDSHAKE, _AUTHENTICATE, _CREATE = 17, 36, 38
#: Larger answers than this are not a broker's answer to these requests.
_MAX_FRAME = 1 << 20


class _Connection:
    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._correlation = 0

    def ask(self, api_key: int, version: int, request: Any) -> Any:
        """The decoded response to `request`."""
        from kio.serial import entity_reader

        from kafkatest.emulator.protocol import response_schema

        reply, offset = self._exchange(api_key, version, request)
        schema = response_schema(api_key, version)
        assert schema is not None
        return entity_reader(schema)(reply, offset)[0]

    def error_code(self, api_key: int, version: int, request: Any) -> int:
        """The response's leading error code only: a broker's refusal writes -1 for
        timestamps, which kio will not decode."""
        reply, offset = self._exchange(api_key, version, request)
        return int(struct.unpack_from(">h", reply, offset)[0])

    def _exchange(self, api_key: int, version: int, request: Any) -> tuple[bytes, int]:
        from kio.serial import entity_writer

        self._correlation += 1
        client_id = b"kafkatest-tokens"
        header = struct.pack(">hhih", api_key, version, self._correlation, len(client_id))
        header += client_id + (b"\0" if _flexible(api_key, version) else b"")
        body = io.BytesIO()
        entity_writer(type(request))(body, request)
        payload = header + body.getvalue()
        self._sock.sendall(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", self._read(4))[0]
        if not 0 < size <= _MAX_FRAME:
            raise BrokerError(f"the broker answered with a frame of {size} bytes")
        reply = self._read(size)
        return reply, 5 if _flexible(api_key, version) else 4

    def _read(self, count: int) -> bytes:
        data = b""
        while len(data) < count:
            chunk = self._sock.recv(count - len(data))
            if not chunk:
                raise BrokerError("the broker closed the connection")
            data += chunk
        return data


def _flexible(api_key: int, version: int) -> bool:
    """Whether this request and its response have flexible (tagged) headers."""
    from kafkatest.emulator.protocol import is_flexible_request

    return is_flexible_request(api_key, version)


def request_entity(api: str, version: int, **fields: Any) -> Any:
    """A kio request, e.g. request_entity("sasl_handshake", 1, mechanism="PLAIN")."""
    import importlib

    from kio.static.constants import EntityType

    module = importlib.import_module(f"kio.schema.{api}.v{version}.request")
    cls = next(
        v
        for v in vars(module).values()
        if isinstance(v, type) and getattr(v, "__type__", None) is EntityType.request
    )
    return cls(**fields)


def _authenticate(
    conn: _Connection, mechanism: str, user: str, password: str, token: bool = False
) -> None:
    answer = conn.ask(_HANDSHAKE, 1, request_entity("sasl_handshake", 1, mechanism=mechanism))
    if answer.error_code.value != 0:
        raise BrokerError(f"the broker does not offer {mechanism}: {answer.error_code.name}")

    def send(auth: bytes) -> bytes:
        reply = conn.ask(_AUTHENTICATE, 2, request_entity("sasl_authenticate", 2, auth_bytes=auth))
        if reply.error_code.value != 0:
            raise BrokerError(f"{user} could not log in: {reply.error_message}")
        return bytes(reply.auth_bytes)

    if mechanism == "PLAIN":
        send(f"\0{user}\0{password}".encode())
        return
    hash_name = SCRAM_MECHANISMS[mechanism][0]
    nonce = secrets.token_urlsafe(18)
    bare = f"n={user.replace('=', '=3D').replace(',', '=2C')},r={nonce}"
    # The tokenauth extension follows the nonce (RFC 5802's reserved-mext place).
    extensions = ",tokenauth=true" if token else ""
    server_first = send(f"n,,{bare}{extensions}".encode()).decode()
    fields = dict(item.split("=", 1) for item in server_first.split(","))
    salted = hashlib.pbkdf2_hmac(
        hash_name, password.encode(), base64.b64decode(fields["s"]), int(fields["i"])
    )
    without_proof = f"c=biws,r={fields['r']}"
    auth_message = f"{bare}{extensions},{server_first},{without_proof}".encode()
    client_key = hmac.new(salted, b"Client Key", hash_name).digest()
    stored_key = hashlib.new(hash_name, client_key).digest()
    signature = hmac.new(stored_key, auth_message, hash_name).digest()
    proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
    send(f"{without_proof},p={base64.b64encode(proof).decode()}".encode())


@contextlib.contextmanager
def logged_in(
    bootstrap: str,
    tls: ssl.SSLContext | None,
    mechanism: str,
    user: str,
    password: str,
    token: bool = False,
) -> Iterator[_Connection]:
    """A connection logged in as `user` (with `token`, as a delegation token: the
    id and HMAC as user and password); raises BrokerError when the login fails."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    raw = socket.create_connection((host, int(port)), timeout=30)
    sock = tls.wrap_socket(raw, server_hostname=host) if tls is not None else raw
    with sock:
        conn = _Connection(sock)
        _authenticate(conn, mechanism, user, password, token)
        yield conn


def create_token(
    bootstrap: str,
    tls: ssl.SSLContext | None,
    mechanism: str,
    user: str,
    password: str,
    renewers: tuple[str, ...],
    max_lifetime_ms: int,
) -> DelegationToken:
    """A token owned by `user`, asked for as `user`."""
    from kio.schema.create_delegation_token.v3.request import CreatableRenewers

    request = request_entity(
        "create_delegation_token",
        3,
        owner_principal_type=None,
        owner_principal_name=None,
        renewers=tuple(
            CreatableRenewers(principal_type=kind, principal_name=name)
            for kind, _, name in (r.partition(":") for r in renewers)
        ),
        max_lifetime=datetime.timedelta(milliseconds=max_lifetime_ms),
    )
    with logged_in(bootstrap, tls, mechanism, user, password) as conn:
        answer = conn.ask(_CREATE, 3, request)
    if answer.error_code.value != 0:
        raise BrokerError(
            f"creating a delegation token for {user} failed: {answer.error_code.name}"
        )

    def ms(when: datetime.datetime) -> int:
        return int(when.timestamp() * 1000)

    return DelegationToken(
        token_id=answer.token_id,
        hmac=base64.b64encode(bytes(answer.hmac)).decode(),
        owner=f"{answer.principal_type}:{answer.principal_name}",
        issue_ms=ms(answer.issue_timestamp),
        expiry_ms=ms(answer.expiry_timestamp),
        max_ms=ms(answer.max_timestamp),
    )


def wait_for_token_login(
    bootstrap: str,
    tls: ssl.SSLContext | None,
    mechanism: str,
    token: DelegationToken,
    timeout_s: float = 30.0,
) -> None:
    """Return once the broker accepts `token`: Kafka's controller answers before the
    broker's token cache has it (the emulator at once)."""

    def log_in() -> None:
        with logged_in(bootstrap, tls, mechanism, token.token_id, token.hmac, token=True):
            pass

    retry(
        log_in,
        (BrokerError, OSError),
        timeout_s,
        0.1,
        lambda exc: BrokerError(
            f"delegation token {token.token_id} could not log in {timeout_s:.0f}s "
            f"after it was created: {exc}"
        ),
    )
