"""A broker with ACLs on, per backend (``--kafka-backend`` picks them), shared by the
package's modules (each is a JVM on the kafka backend).

Every test adds the ACLs it needs and `acl_broker` removes them all afterwards, so
tests share the broker without sharing permissions. PLAINTEXT clients
are ``User:ANONYMOUS``; kafkatest's own helpers act as a super user.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafkatest import Broker, start_broker
from kafkatest.pytest_plugin import selected_backends


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "acl_broker_session" in metafunc.fixturenames:
        metafunc.parametrize(
            "acl_broker_session", selected_backends(metafunc.config), indirect=True, scope="package"
        )


@pytest.fixture(scope="package")  # closed after the package: an idle Kafka JVM costs CPU
def acl_broker_session(request: pytest.FixtureRequest) -> Iterator[Broker]:
    broker = start_broker(request.param, acls=True)
    try:
        yield broker
    finally:
        broker.close()


@pytest.fixture
def acl_broker(acl_broker_session: Broker) -> Iterator[Broker]:
    """The module's ACL broker with no ACLs at the start of the test."""
    yield acl_broker_session
    acl_broker_session.remove_acls()
