"""One broker's security at run time: its settings, its CA and the certificates made from it.

Both backends hold one of these; it turns "user alice" into the options each kind
of client needs and owns the files those options point at. The certificate code (and
`cryptography`, 50 ms of every run's start) is imported only by a broker that has TLS.
"""

from __future__ import annotations

import secrets
import ssl
from pathlib import Path
from typing import TYPE_CHECKING

from kafkatest._ground import tempdirs
from kafkatest.errors import BrokerError
from kafkatest.security import (
    ADMIN_USER,
    DEFAULT_HOSTS,
    ClientTls,
    DelegationToken,
    Security,
    check_user,
    kafka_clients_config,
    librdkafka_config,
)
from kafkatest.security_names import ListenerSecurity

if TYPE_CHECKING:
    from kafkatest.security.tls import CertificateAuthority, ClientCertificate, ServerCertificate


def tls_hosts(host: str) -> tuple[str, ...]:
    """The names a server certificate must cover for a listener bound to `host`."""
    if host in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::"):
        return DEFAULT_HOSTS
    return (host, *DEFAULT_HOSTS)


class BrokerSecurity:
    def __init__(self, security: Security, hosts: tuple[str, ...] = DEFAULT_HOSTS) -> None:
        self.security = security
        self._owned_dir: Path | None = None
        self.ca: CertificateAuthority | None = None
        self.server: ServerCertificate | None = None
        self._client_certs: dict[str, ClientCertificate] = {}
        self.directory = security.tls_dir
        #: This broker's ``delegation.token.secret.key``, None while tokens are off.
        self.token_secret = secrets.token_urlsafe(32) if security.tokens_enabled else None
        if security.tls:
            from kafkatest.security.tls import CertificateAuthority

            if self.directory is None:
                self._owned_dir = self.directory = tempdirs.owned_tempdir("kafkatest-tls-")
            self.ca = CertificateAuthority(self.directory)
            self.server = self.ca.server_certificate(hosts)

    @property
    def admin_user(self) -> str:
        return ADMIN_USER

    @property
    def admin_principal(self) -> str:
        """The principal the harness's own clients authenticate as (a super user)."""
        if self.security.sasl:
            return f"User:{ADMIN_USER}"
        if self.security.client_auth != "none":
            return self.client_certificate(ADMIN_USER).principal
        return "User:ANONYMOUS"

    def client_certificate(self, name: str) -> ClientCertificate:
        """The certificate `name` presents on mutual TLS (made once, then reused)."""
        if self.ca is None:
            raise BrokerError(
                f"client certificates need a TLS listener; this broker is {self.security.protocol}"
            )
        certificate = self._client_certs.get(name)
        if certificate is None:
            certificate = self._client_certs[name] = self.ca.client_certificate(name)
        return certificate

    def _tls(self, user: str) -> ClientTls | None:
        if self.ca is None:
            return None
        if self.security.client_auth == "none":
            return ClientTls(self.ca.ca_pem)
        cert = self.client_certificate(user)
        return ClientTls(self.ca.ca_pem, cert.cert_pem, cert.key_pem, cert.keystore_pem)

    def _login(self, user: str | None, mechanism: str | None) -> tuple[str, str | None, str | None]:
        name = user or ADMIN_USER
        if not self.security.sasl:
            return name, None, None
        return name, self.security.password_of(name), self.security.mechanism_for(mechanism)

    def librdkafka(self, user: str | None = None, mechanism: str | None = None) -> dict[str, str]:
        name, password, chosen = self._login(user, mechanism)
        return librdkafka_config(self.security, self._tls(name), name, password, chosen)

    def kafka_clients(
        self,
        user: str | None = None,
        mechanism: str | None = None,
        token: DelegationToken | None = None,
    ) -> dict[str, str]:
        if token is not None:
            owner = token.owner.partition(":")[2]
            scram = self.token_mechanism(mechanism)
            return kafka_clients_config(
                self.security, self._tls(owner), token.token_id, token.hmac, scram, token=True
            )
        name, password, chosen = self._login(user, mechanism)
        return kafka_clients_config(self.security, self._tls(name), name, password, chosen)

    def token_mechanism(self, mechanism: str | None = None) -> str:
        """The SCRAM mechanism a token logs in with: `mechanism`, else the first
        enabled SCRAM mechanism; tokens must be on."""
        if self.token_secret is None:
            raise BrokerError(
                "this broker does not serve delegation tokens: they need a SASL listener "
                "with a SCRAM mechanism (and delegation_tokens left True)"
            )
        if mechanism is not None:
            chosen = self.security.mechanism_for(mechanism)
            if chosen == "PLAIN":
                raise BrokerError("a delegation token logs in over SCRAM, not PLAIN")
            return chosen
        return next(m for m in self.security.mechanisms if m != "PLAIN")

    def client_tls_context(self, user: str) -> ssl.SSLContext | None:
        """A Python TLS context for `user` (its certificate on mutual TLS)."""
        tls = self._tls(user)
        if tls is None:
            return None
        context = ssl.create_default_context(cafile=str(tls.ca_pem))
        if tls.cert_pem is not None and tls.key_pem is not None:
            context.load_cert_chain(str(tls.cert_pem), str(tls.key_pem))
        return context

    def add_user(self, name: str, password: str, mechanism: str | None) -> tuple[str, ...]:
        """Record `name`'s password; the mechanisms it may now log in with."""
        check_user(name, password)
        mechanisms = (
            (self.security.mechanism_for(mechanism),) if mechanism else self.security.mechanisms
        )
        self.security.users[name] = password
        return mechanisms

    def listener_security(self) -> ListenerSecurity:
        """The emulator listener's side of these settings."""
        from kafkatest.security.tls import server_ssl_context

        context = None
        if self.ca is not None and self.server is not None:
            context = server_ssl_context(self.ca, self.server, self.security.client_auth)
        return ListenerSecurity(
            self.security.protocol,
            self.security.mechanisms if self.security.sasl else (),
            context,
        )

    def close(self) -> None:
        if self._owned_dir is not None:
            tempdirs.remove(self._owned_dir)
            self._owned_dir = None
