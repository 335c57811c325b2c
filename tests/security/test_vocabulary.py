"""One security vocabulary: the harness's `Security` and the emulator's listener accept
and refuse the same protocols and mechanisms (both read `kafkatest.security_names`)."""

from __future__ import annotations

import pytest

from kafkatest.errors import BrokerError
from kafkatest.security import Security
from kafkatest.security_names import MECHANISMS, PROTOCOLS, ListenerSecurity


@pytest.mark.parametrize("mechanism", [*MECHANISMS, "GSSAPI", "OAUTHBEARER"])
def test_harness_and_listener_agree_on_mechanisms(mechanism: str) -> None:
    known = mechanism in MECHANISMS
    try:
        Security(protocol="SASL_PLAINTEXT", mechanisms=(mechanism,))
        harness = True
    except BrokerError:
        harness = False
    try:
        ListenerSecurity("SASL_PLAINTEXT", (mechanism,))
        listener = True
    except ValueError:
        listener = False
    assert harness is listener is known


@pytest.mark.parametrize("protocol", [*PROTOCOLS, "SASL_SCRAM"])
def test_harness_and_listener_agree_on_protocols(protocol: str) -> None:
    known = protocol in PROTOCOLS
    try:
        Security(protocol=protocol, mechanisms=("PLAIN",))
        harness = True
    except BrokerError:
        harness = False
    try:
        # A TLS listener needs a context; its absence is refused after the protocol check.
        ListenerSecurity(protocol, ("PLAIN",) if protocol.startswith("SASL_") else ())
        listener = True
    except ValueError as error:
        listener = "unknown security protocol" not in str(error)
    assert harness is listener is known
