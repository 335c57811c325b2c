"""Kafka's security vocabulary, declared once: listener protocols, SASL mechanisms and
what a listener asks of a connection (`ListenerSecurity`).

The emulator's listeners and credentials, the harness's `kafkatest.security.Security`,
the brokers (which make a `ListenerSecurity` for the emulator from a `Security`), the
fixtures' options and the applications all name protocols and mechanisms from here.
It is a ground module (no kafkatest imports) so that the sealed emulator may import it.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass

#: Kafka's ``security.protocol`` values of a listener.
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
#: SCRAM mechanism name -> (its hashlib name, its number in the Kafka protocol).
SCRAM_MECHANISMS: dict[str, tuple[str, int]] = {
    "SCRAM-SHA-256": ("sha256", 1),
    "SCRAM-SHA-512": ("sha512", 2),
}
#: The SASL mechanisms both backends serve (``sasl.enabled.mechanisms``).
MECHANISMS = ("PLAIN", *SCRAM_MECHANISMS)
#: Kafka's ``ssl.client.auth`` values.
CLIENT_AUTH = ("none", "requested", "required")


def listener_problem(protocol: str, mechanisms: tuple[str, ...]) -> str | None:
    """What is wrong with a listener of `protocol` enabling `mechanisms`, or None: the one
    rule `ListenerSecurity` and the harness's `Security` check."""
    if protocol not in PROTOCOLS:
        return f"unknown security protocol {protocol!r}: choose one of {', '.join(PROTOCOLS)}"
    unknown = [m for m in mechanisms if m not in MECHANISMS]
    if unknown or (protocol.startswith("SASL_") and not mechanisms):
        return (
            f"unsupported SASL mechanism(s) {', '.join(unknown) or '(none given)'}: "
            f"choose from {', '.join(MECHANISMS)}"
        )
    return None


@dataclass(frozen=True)
class ListenerSecurity:
    #: Kafka's security.protocol of the listener.
    protocol: str = "PLAINTEXT"
    #: sasl.enabled.mechanisms, in the order SaslHandshake lists them.
    mechanisms: tuple[str, ...] = ()
    #: The server side of TLS (certificate, key, client-certificate policy).
    ssl_context: ssl.SSLContext | None = None

    def __post_init__(self) -> None:
        problem = listener_problem(self.protocol, self.mechanisms)
        if problem is not None:
            raise ValueError(problem)
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


def _hash_set_bucket(text: str) -> int:
    """The bucket of `text` in a Java HashSet of a few elements (16 buckets)."""
    h = 0
    for unit in text.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & 15
