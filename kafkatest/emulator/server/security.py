"""What a listener asks of a connection before it serves requests: TLS, SASL, or neither.

Security is a layer of the connection, not of the handlers: the listener wraps the
socket in TLS (asyncio does the handshake before the first byte reaches us), the
SASL exchange runs before the request loop, and what both decide is one string,
the connection's principal, that every request's context then carries. A
PLAINTEXT listener has no `ListenerSecurity` at all, so the request loop is the
same code it was before security existed.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass

from kafkatest.emulator.server.context import ANONYMOUS, TokenPrincipal
from kafkatest.security_names import MECHANISMS as SASL_MECHANISMS
from kafkatest.security_names import PROTOCOLS

__all__ = ["PROTOCOLS", "ListenerSecurity"]


@dataclass(frozen=True)
class ListenerSecurity:
    #: Kafka's security.protocol of the listener.
    protocol: str = "PLAINTEXT"
    #: sasl.enabled.mechanisms, in the order SaslHandshake lists them.
    mechanisms: tuple[str, ...] = ()
    #: The server side of TLS (certificate, key, client-certificate policy).
    ssl_context: ssl.SSLContext | None = None

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(
                f"unknown security protocol {self.protocol!r}; choose one of {', '.join(PROTOCOLS)}"
            )
        if self.sasl and not self.mechanisms:
            raise ValueError(f"a {self.protocol} listener needs at least one SASL mechanism")
        unknown = [m for m in self.mechanisms if m not in SASL_MECHANISMS]
        if unknown:
            raise ValueError(
                f"unsupported SASL mechanism(s) {', '.join(unknown)}; "
                f"choose from {', '.join(SASL_MECHANISMS)}"
            )
        if self.tls and self.ssl_context is None:
            raise ValueError(f"a {self.protocol} listener needs an SSL context")

    @property
    def advertised_mechanisms(self) -> tuple[str, ...]:
        """The order SaslHandshake lists them in: Kafka copies the setting into a
        Java HashSet, so clients see its iteration order, not the configured one."""
        return tuple(
            sorted(self.mechanisms, key=lambda m: (_hash_set_bucket(m), self.mechanisms.index(m)))
        )

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("SASL_")

    @property
    def tls(self) -> bool:
        return self.protocol.endswith("SSL")


def tls_principal(writer: asyncio.StreamWriter) -> str:
    """Kafka's default principal for a TLS peer: the certificate's DN (RFC 2253), else ANONYMOUS.

    `ssl.principal.mapping.rules=DEFAULT` keeps the distinguished name unchanged,
    most specific attribute first, e.g. ``User:CN=alice,OU=eng,O=Acme``.
    """
    ssl_object = writer.get_extra_info("ssl_object")
    if ssl_object is None:
        return ANONYMOUS
    der = ssl_object.getpeercert(binary_form=True)
    if not der:
        return ANONYMOUS
    from cryptography import x509

    certificate = x509.load_der_x509_certificate(der)
    return f"User:{certificate.subject.rfc4514_string()}"


def _hash_set_bucket(text: str) -> int:
    """The bucket of `text` in a Java HashSet of a few elements (16 buckets)."""
    h = 0
    for unit in text.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & 15


def token_requests_allowed(protocol: str, principal: str) -> bool:
    """Whether a connection may ask for delegation tokens (KafkaApis.allowTokenRequests):
    only one that authenticated with SASL, or with a client certificate, may; a
    PLAINTEXT or one-way TLS client may not, nor one that logged in with a token."""
    if protocol == "PLAINTEXT" or isinstance(principal, TokenPrincipal):
        return False
    return not (protocol == "SSL" and principal == ANONYMOUS)
