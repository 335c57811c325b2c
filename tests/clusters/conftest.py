"""A three-broker cluster per backend (``--kafka-backend`` picks them), shared by
this package: the emulator with brokers=3, Kafka as three broker JVMs and a
dedicated controller. Tests use their own topics and undo their faults."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafkatest import Broker, start_broker
from kafkatest.faults import faults_for
from kafkatest.pytest_plugin import selected_backends


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "three_broker_cluster" in metafunc.fixturenames:
        backends = [b for b in selected_backends(metafunc.config) if b in ("emulator", "kafka")]
        metafunc.parametrize("three_broker_cluster", backends, indirect=True, scope="package")


@pytest.fixture(scope="package")
def three_broker_cluster(request: pytest.FixtureRequest) -> Iterator[Broker]:
    # Topics a test does not size (a scenario's) are replicated to all three brokers.
    broker = start_broker(request.param, brokers=3, config={"default.replication.factor": 3})
    try:
        yield broker
    finally:
        broker.close()


@pytest.fixture
def cluster(three_broker_cluster: Broker) -> Iterator[Broker]:
    """The package's cluster, every broker up again after the test."""
    yield three_broker_cluster
    faults_for(three_broker_cluster).clear()
