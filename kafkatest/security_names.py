"""Kafka's security vocabulary, declared once: listener protocols and SASL mechanisms.

The emulator's listeners (`kafkatest.emulator.server.security`, its credentials),
the harness's `kafkatest.security.Security`, the brokers, the fixtures' options and
the applications all name protocols and mechanisms from here. It is a ground module
(no kafkatest imports) so that the sealed emulator may import it too.
"""

from __future__ import annotations

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
