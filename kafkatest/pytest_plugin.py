"""pytest fixtures for Kafka + PySpark tests (registered through the pytest11 entry point).

A thin layer: every fixture wraps a plain library call, so the same things work in
scripts and other test runners. One broker and one SparkSession serve the whole
session (both are slow to start); tests are isolated by unique topic names and a
fresh checkpoint directory each.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from kafkatest.brokers.base import Broker
from kafkatest.brokers.registry import BACKENDS, default_backend, start_broker

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_BROKER_KEY = pytest.StashKey[Broker]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafkatest", "Kafka + PySpark testing")
    group.addoption(
        "--kafka-backend",
        choices=BACKENDS,
        default=None,
        help=f"broker to run tests against (default: {default_backend()}; env KAFKATEST_BACKEND)",
    )
    group.addoption(
        "--kafka-bootstrap",
        default=None,
        help="host:port of an existing cluster, for --kafka-backend=external",
    )


def pytest_configure(config: pytest.Config) -> None:
    for marker in ("kafka_backends(*names): run this test only on these broker backends",):
        config.addinivalue_line("markers", marker)


def _backend(config: pytest.Config) -> str:
    return config.getoption("--kafka-backend") or default_backend()


@pytest.fixture(scope="session")
def kafka_backend(pytestconfig: pytest.Config) -> str:
    """Name of the backend this run uses (emulator, kafka, container, external)."""
    return _backend(pytestconfig)


@pytest.fixture(scope="session")
def kafka_broker(pytestconfig: pytest.Config, kafka_backend: str) -> Iterator[Broker]:
    """The session's broker, started once and closed at the end of the run."""
    broker = start_broker(kafka_backend, pytestconfig.getoption("--kafka-bootstrap"))
    pytestconfig.stash[_BROKER_KEY] = broker
    try:
        yield broker
    finally:
        pytestconfig.stash.__delitem__(_BROKER_KEY)
        broker.close()


@pytest.fixture(autouse=True)
def _kafkatest_backend_filter(request: pytest.FixtureRequest) -> None:
    marker = request.node.get_closest_marker("kafka_backends")
    if marker is not None and _backend(request.config) not in marker.args:
        pytest.skip(f"runs only on the {', '.join(marker.args)} backend(s)")


@pytest.fixture(scope="session")
def kafka_bootstrap(kafka_broker: Broker) -> str:
    """``host:port`` of the session broker, for ``kafka.bootstrap.servers``."""
    return kafka_broker.bootstrap_servers


_topic_counter = itertools.count(1)


def unique_topic_name(hint: str) -> str:
    """A legal, unique, readable topic name derived from a test name."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", hint).strip("-.")[:60] or "topic"
    return f"kt-{slug}-{next(_topic_counter)}-{uuid.uuid4().hex[:6]}"


@pytest.fixture
def kafka_topic(
    request: pytest.FixtureRequest, kafka_broker: Broker
) -> Iterator[Callable[..., str]]:
    """Factory: ``kafka_topic(partitions=1, config=None, name=None) -> str``.

    Each call creates a topic unique to this test; all are deleted at teardown.
    """
    created: list[str] = []

    def make(
        partitions: int = 1, config: Mapping[str, Any] | None = None, name: str | None = None
    ) -> str:
        topic = name or unique_topic_name(request.node.name)
        kafka_broker.create_topic(topic, partitions=partitions, config=config)
        created.append(topic)
        return topic

    yield make
    for topic in created:
        with contextlib.suppress(Exception):
            if kafka_broker.topic_exists(topic):
                kafka_broker.delete_topic(topic)


@pytest.fixture(scope="session")
def spark_session() -> Iterator[SparkSession]:
    """The run's one SparkSession (local[2], Kafka connector attached, UI off)."""
    from kafkatest.spark.session import kafka_spark_session, stop_spark_session

    session = kafka_spark_session()
    try:
        yield session
    finally:
        stop_spark_session(session)


@pytest.fixture
def spark(spark_session: SparkSession) -> Iterator[SparkSession]:
    """The shared SparkSession; streaming queries a test leaves running are stopped."""
    yield spark_session
    for query in spark_session.streams.active:
        with contextlib.suppress(Exception):
            query.stop()


@pytest.fixture
def checkpoint_dir(tmp_path: Path) -> Path:
    """A fresh, empty checkpoint location for this test's streaming query."""
    path = tmp_path / "checkpoint"
    path.mkdir()
    return path


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
    """On failure, attach the broker's log tail: the broker's side of the story."""
    report = yield
    if report.failed:
        broker = item.config.stash.get(_BROKER_KEY, None)
        if broker is not None:
            with contextlib.suppress(Exception):
                text = broker.diagnostics()
                if text:
                    report.sections.append(("kafkatest broker", text))
    return report
