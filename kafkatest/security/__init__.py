"""Secured brokers for tests: listeners, users, certificates and the client options to match.

A test asks for a broker as production runs it (``security_protocol="SASL_SSL"``,
SCRAM users, a CA of its own) and gets back, from the broker, the exact options a
client needs: `client_config(user)` for Python clients (librdkafka names) and
`spark_options(user)` for a Spark job (``kafka.``-prefixed kafka-clients names).
The same `Security` drives the emulator and real Kafka, so one test runs on both.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kafkatest.errors import BrokerError
from kafkatest.security_names import (
    CLIENT_AUTH,
    MECHANISMS,
    PROTOCOLS,
    SCRAM_MECHANISMS,
    listener_problem,
)

__all__ = ["CLIENT_AUTH", "MECHANISMS", "PROTOCOLS"]
#: The harness's own user: seeding, sink readers, admin helpers and faults log in as it.
ADMIN_USER = "kafkatest-admin"
#: The names a loopback broker is reached by; a server certificate covers them all.
DEFAULT_HOSTS = ("127.0.0.1", "localhost", "::1")

_JAAS_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    **dict.fromkeys(SCRAM_MECHANISMS, "org.apache.kafka.common.security.scram.ScramLoginModule"),
}


@dataclass
class Security:
    """How a broker's client listener is secured, and who may log in.

    `mechanisms` are the listener's ``sasl.enabled.mechanisms``; the first is what
    `client_config` uses unless told otherwise. Every user in `users` may log in
    with every mechanism. `client_auth` is Kafka's ``ssl.client.auth``: with
    ``required`` (mutual TLS) on an SSL listener the principal is the client
    certificate's subject.
    """

    protocol: str = "PLAINTEXT"
    mechanisms: tuple[str, ...] = ("PLAIN",)
    users: dict[str, str] = field(default_factory=dict)
    client_auth: str = "none"
    #: Where certificates are written; a temporary directory when None.
    tls_dir: Path | None = None
    admin_password: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    #: Serve delegation tokens whenever a SCRAM mechanism is enabled (tokens log in
    #: over SCRAM); False starts the broker without a token secret, as Kafka's default.
    delegation_tokens: bool = True

    def __post_init__(self) -> None:
        self.protocol = self.protocol.upper()
        self.mechanisms = tuple(m.upper() for m in self.mechanisms)
        problem = listener_problem(self.protocol, self.mechanisms)
        if problem is not None:
            raise BrokerError(problem)
        if self.client_auth not in CLIENT_AUTH:
            raise BrokerError(
                f"ssl client auth must be one of {', '.join(CLIENT_AUTH)}, got {self.client_auth!r}"
            )
        if self.client_auth != "none" and not self.tls:
            raise BrokerError(
                f"mutual TLS (client_auth={self.client_auth!r}) needs an SSL or SASL_SSL listener, "
                f"not {self.protocol}"
            )
        if set(self.users) - {ADMIN_USER} and not self.sasl:
            raise BrokerError(
                f"users log in over SASL and the listener is {self.protocol}: "
                "use SASL_PLAINTEXT or SASL_SSL (mutual TLS identifies clients by certificate)"
            )
        for name, password in self.users.items():
            check_user(name, password)
        self.users = {ADMIN_USER: self.admin_password, **self.users}

    @classmethod
    def of(
        cls,
        protocol: str = "PLAINTEXT",
        mechanisms: str | Iterable[str] | None = None,
        users: Mapping[str, str] | None = None,
        client_auth: str = "none",
        tls_dir: str | Path | None = None,
        delegation_tokens: bool = True,
    ) -> Security:
        if isinstance(mechanisms, str):
            mechanisms = [m.strip() for m in mechanisms.split(",") if m.strip()]
        return cls(
            protocol=protocol,
            mechanisms=tuple(mechanisms) if mechanisms else ("PLAIN",),
            users=dict(users or {}),
            client_auth=client_auth,
            tls_dir=Path(tls_dir) if tls_dir is not None else None,
            delegation_tokens=delegation_tokens,
        )

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("SASL_")

    @property
    def tokens_enabled(self) -> bool:
        """Whether the broker serves delegation tokens: SASL with a SCRAM mechanism."""
        return self.delegation_tokens and self.sasl and any(m != "PLAIN" for m in self.mechanisms)

    @property
    def tls(self) -> bool:
        return self.protocol.endswith("SSL")

    @property
    def secured(self) -> bool:
        return self.protocol != "PLAINTEXT"

    def mechanism_for(self, mechanism: str | None) -> str:
        chosen = (mechanism or self.mechanisms[0]).upper()
        if chosen not in self.mechanisms:
            raise BrokerError(
                f"SASL mechanism {chosen} is not enabled on this broker "
                f"(enabled: {', '.join(self.mechanisms)})"
            )
        return chosen

    def password_of(self, user: str) -> str:
        try:
            return self.users[user]
        except KeyError:
            raise BrokerError(
                f"unknown user {user!r}: add it with broker.add_user({user!r}, password) "
                f"or pass users={{...}} to start_broker (known: {', '.join(sorted(self.users))})"
            ) from None


def check_user(name: str, password: str) -> None:
    if not name or not isinstance(name, str):
        raise BrokerError("a user name must be a non-empty string")
    if any(c in name for c in ',="\n\0') or any(c in password for c in '"\n\0\\'):
        raise BrokerError(
            f'user {name!r}: names may not contain , = " or newlines and passwords may not '
            'contain " \\ or newlines (they go into JAAS configuration strings)'
        )
    if not password:
        raise BrokerError(f"user {name!r} needs a non-empty password")


def jaas_config(mechanism: str, user: str, password: str, token: bool = False) -> str:
    """kafka-clients' ``sasl.jaas.config`` for one login; with `token`, a delegation
    token's (its id and HMAC as user and password, ``tokenauth="true"``)."""
    extension = ' tokenauth="true"' if token else ""
    return (
        f'{_JAAS_MODULES[mechanism]} required username="{user}" password="{password}"{extension};'
    )


@dataclass(frozen=True)
class DelegationToken:
    """A delegation token as its owner receives it (``broker.create_token``).

    Clients log in with it over SCRAM: `token_id` as the user name, `hmac` (base64,
    as ``kafka-delegation-tokens --create`` prints it) as the password, and the
    ``tokenauth`` extension, which only kafka-clients (Java) sends: librdkafka has
    no way to send it, so confluent-kafka clients cannot use a token.
    """

    token_id: str
    hmac: str
    #: "User:<name>".
    owner: str
    issue_ms: int
    expiry_ms: int
    max_ms: int

    @property
    def hmac_bytes(self) -> bytes:
        """What Renew/ExpireDelegationToken name the token by."""
        import base64

        return base64.b64decode(self.hmac)


@dataclass(frozen=True)
class ClientTls:
    """The TLS files a client uses: the CA it trusts and, for mutual TLS, its own identity."""

    ca_pem: Path
    cert_pem: Path | None = None
    key_pem: Path | None = None
    keystore_pem: Path | None = None


def librdkafka_config(
    security: Security,
    tls: ClientTls | None,
    user: str | None,
    password: str | None,
    mechanism: str | None,
) -> dict[str, str]:
    """confluent-kafka / librdkafka settings for `user` on this listener."""
    config: dict[str, str] = {}
    if not security.secured:
        return config
    config["security.protocol"] = security.protocol
    if security.sasl:
        assert user is not None and password is not None and mechanism is not None
        config.update(
            {"sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password}
        )
    if tls is not None:
        config["ssl.ca.location"] = str(tls.ca_pem)
        if tls.cert_pem is not None and tls.key_pem is not None:
            config["ssl.certificate.location"] = str(tls.cert_pem)
            config["ssl.key.location"] = str(tls.key_pem)
    return config


def kafka_clients_config(
    security: Security,
    tls: ClientTls | None,
    user: str | None,
    password: str | None,
    mechanism: str | None,
    token: bool = False,
) -> dict[str, str]:
    """Java kafka-clients settings (tools' --command-config, Spark without the prefix);
    with `token`, `user` and `password` are a delegation token's id and HMAC."""
    config: dict[str, str] = {}
    if not security.secured:
        return config
    config["security.protocol"] = security.protocol
    if security.sasl:
        assert user is not None and password is not None and mechanism is not None
        config["sasl.mechanism"] = mechanism
        config["sasl.jaas.config"] = jaas_config(mechanism, user, password, token)
    if tls is not None:
        config["ssl.truststore.type"] = "PEM"
        config["ssl.truststore.location"] = str(tls.ca_pem)
        if tls.keystore_pem is not None:
            config["ssl.keystore.type"] = "PEM"
            config["ssl.keystore.location"] = str(tls.keystore_pem)
    return config


def properties_text(config: Mapping[str, str]) -> str:
    """A Java properties file (backslashes and the few special characters escaped)."""

    def escape(value: str) -> str:
        return value.replace("\\", "\\\\").replace("\n", "\\n")

    return "".join(f"{key}={escape(value)}\n" for key, value in config.items())
