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

from kafkatest.emulator.server.context import ANONYMOUS, TokenPrincipal
from kafkatest.security_names import PROTOCOLS, ListenerSecurity

#: The listener spec is Kafka vocabulary shared with the brokers (`kafkatest.security_names`).
__all__ = ["PROTOCOLS", "ListenerSecurity"]


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


def token_requests_allowed(protocol: str, principal: str) -> bool:
    """Whether a connection may ask for delegation tokens (KafkaApis.allowTokenRequests):
    only one that authenticated with SASL, or with a client certificate, may; a
    PLAINTEXT or one-way TLS client may not, nor one that logged in with a token."""
    if protocol == "PLAINTEXT" or isinstance(principal, TokenPrincipal):
        return False
    return not (protocol == "SSL" and principal == ANONYMOUS)
