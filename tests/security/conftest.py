"""Secured brokers for the security tests, one per (backend, listener) and session.

Each test names the listener it needs; the broker is started on first use for
every backend given to ``--kafka-backend`` (a real Kafka JVM takes seconds, so
they are shared) and closed once the package's tests are done.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from kafkatest import Broker
from kafkatest.brokers.registry import start_broker
from kafkatest.plugin.brokers import _release_spark_clients
from kafkatest.pytest_plugin import selected_backends

ALICE = ("alice", "alice-secret")
#: The listeners the tests use (few: each is a broker JVM on the kafka backend).
LISTENERS: dict[str, dict[str, object]] = {
    "sasl_plaintext": {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanisms": ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"],
        "users": dict([ALICE]),
    },
    "sasl_ssl": {
        "security_protocol": "SASL_SSL",
        "sasl_mechanisms": ["SCRAM-SHA-512", "PLAIN"],
        "users": dict([ALICE]),
    },
    "mtls": {"security_protocol": "SSL", "ssl_client_auth": "required"},
    # TLS whose client certificate is optional: plain SSL clients and mutual TLS alike.
    "ssl_requested": {"security_protocol": "SSL", "ssl_client_auth": "requested"},
    # With ACLs, so that the principal a connection authenticated as is observable.
    "sasl_acls": {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanisms": ["SCRAM-SHA-256"],
        "users": {"alice": "alice-secret", "bob": "bob-secret"},
        "acls": True,
    },
    "mtls_acls": {"security_protocol": "SSL", "ssl_client_auth": "required", "acls": True},
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", selected_backends(metafunc.config), scope="session")


@pytest.fixture(scope="package")
def _secured_brokers() -> Iterator[dict[tuple[str, str], Broker]]:
    # Package scope: an idle Kafka JVM still costs CPU (a CI lane kept six of them
    # up for a quarter of an hour after this package's last test).
    brokers: dict[tuple[str, str], Broker] = {}
    yield brokers
    _release_spark_clients()  # Spark's cached producers go before their broker does
    for broker in brokers.values():
        broker.close()


@pytest.fixture
def secured(
    backend: str, _secured_brokers: dict[tuple[str, str], Broker]
) -> Callable[[str], Broker]:
    """secured("sasl_ssl") -> the session's broker of this backend with that listener."""

    def get(listener: str) -> Broker:
        key = (backend, listener)
        if key not in _secured_brokers:
            _secured_brokers[key] = start_broker(backend, **LISTENERS[listener])
        return _secured_brokers[key]

    return get
