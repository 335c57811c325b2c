"""The broker fixtures: one broker per backend for the session, topics, faults.

The broker starts beside Spark when a run uses both (`pytest_collection_finish`); the
`kafka_broker` fixture hands that one out, or starts its own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import re
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from kafkatest._ground.background_start import BackgroundStart
from kafkatest.brokers.base import Broker
from kafkatest.brokers.capabilities import Capability
from kafkatest.brokers.registry import capabilities_of, start_broker
from kafkatest.plugin.options import (
    _ini_config,
    cluster_size,
    kafkatest_config,
    security_options,
    selected_backends,
)

if TYPE_CHECKING:
    from kafkatest.faults import Faults
    from kafkatest.schema_registry import SchemaRegistryServer

_BROKERS_KEY = pytest.StashKey[list[Broker]]()
_EARLY_BROKER_KEY = pytest.StashKey["BackgroundStart[Broker]"]()
#: The topics a test made with `kafka_topic`: its failure report shows what the broker
#: did to them.
TEST_TOPICS_KEY = pytest.StashKey[list[str]]()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """With several backends, every test that uses the broker runs once on each.

    The broker fixture is session-scoped, so pytest groups the tests by backend and
    starts each broker once.
    """
    if "kafka_broker" not in metafunc.fixturenames:
        return
    backends = selected_backends(metafunc.config)
    marker = metafunc.definition.get_closest_marker("kafka_backends")
    if marker is not None:
        backends = [b for b in backends if b in marker.args] or backends[:1]
    settings = metafunc.definition.get_closest_marker("kafka_broker_config")
    if settings is not None:
        # Tests asking for the same settings share one broker of their own per backend.
        wanted = _marker_config(settings)
        requests = [BrokerRequest(backend, tuple(sorted(wanted.items()))) for backend in backends]
        metafunc.parametrize("kafka_broker", requests, indirect=True, scope="session", ids=str)
    elif len(backends) > 1 or marker is not None:
        metafunc.parametrize("kafka_broker", backends, indirect=True, scope="session")


@dataclasses.dataclass(frozen=True)
class BrokerRequest:
    """A backend plus broker settings from a ``kafka_broker_config`` marker."""

    backend: str
    config: tuple[tuple[str, str], ...]

    def __str__(self) -> str:
        return "-".join([self.backend, *(f"{k}={v}" for k, v in self.config)])


def _marker_config(marker: pytest.Mark) -> dict[str, str]:
    """``@pytest.mark.kafka_broker_config({"auto.create.topics.enable": "false"})``."""
    given: dict[str, object] = {}
    for arg in marker.args:
        if not isinstance(arg, Mapping):
            raise pytest.UsageError(
                f"kafka_broker_config takes a dict of Kafka broker properties, not {arg!r}"
            )
        given.update(arg)
    given.update(marker.kwargs)
    return {
        name: str(value).lower() if isinstance(value, bool) else str(value)
        for name, value in given.items()
    }


def _start_session_broker(config: pytest.Config, param: object) -> Broker:
    """Start the broker `param` names (a backend or a `BrokerRequest`; None: the run's
    first backend), with the run's options, and warm the harness's producer."""
    backend = param.backend if isinstance(param, BrokerRequest) else param
    backend = str(backend or selected_backends(config)[0])
    settings = {
        **_ini_config(config),
        **dict(param.config if isinstance(param, BrokerRequest) else ()),
    }
    options: dict[str, object] = {"config": settings} if settings else {}
    can = capabilities_of(backend)
    run = kafkatest_config(config)
    count = cluster_size(run, backend)
    # both counts are checked to be 1 or more; 1 is every backend's default
    if Capability.CLUSTERS in can and count > 1:
        options["brokers"] = count
    advertised = run.advertised_host
    if advertised and Capability.LISTENERS in can:
        options["host"] = advertised
    options.update(security_options(config))
    shared = _shared_kafka(config, backend, options)
    if shared is not None:
        broker: Broker = shared
        try:
            broker.start()
        except BaseException:
            broker.close()
            raise
    else:
        broker = start_broker(backend, run.bootstrap or None, **options)
    # librdkafka's idempotent producer asks for its producer id on a 500 ms retry
    # timer when no connection is up yet, which is always the case at its creation:
    # made now, the first seeding of the run does not wait for that timer.
    try:
        broker.warm_up_producer()
    except BaseException:
        broker.close()
        raise
    return broker


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the run's broker beside Spark when the run will use both.

    The `spark` and `kafka_broker` fixtures would otherwise start one after the other
    (seconds each on a cold run, the emulator's import and the producer's warm-up on a
    warm one); the broker started here is the one `kafka_broker` hands out, and one
    that no test took is closed at the end of the run.
    """
    config = session.config
    if config.option.collectonly or _EARLY_BROKER_KEY in config.stash:
        return
    default_broker = spark = False
    for item in session.items:
        names = getattr(item, "fixturenames", ())
        callspec = getattr(item, "callspec", None)
        if _uses_this_broker_fixture(item) and "kafka_broker" not in getattr(
            callspec, "params", {}
        ):
            default_broker = True
        spark = spark or "spark_session" in names
    if default_broker and spark:
        config.stash[_EARLY_BROKER_KEY] = BackgroundStart(
            lambda: _start_session_broker(config, None), name="kafkatest-broker-start"
        )


def _uses_this_broker_fixture(item: pytest.Item) -> bool:
    """Whether `item` gets its broker from the fixture below, not from a conftest's
    own `kafka_broker` (a broker started early for it would never be taken)."""
    info: Any = getattr(item, "_fixtureinfo", None)
    definitions: Sequence[Any] = info.name2fixturedefs.get("kafka_broker", ()) if info else ()
    return bool(definitions) and definitions[-1].func.__module__ == __name__


def pytest_sessionfinish(session: pytest.Session) -> None:
    early = session.config.stash.get(_EARLY_BROKER_KEY, None)
    if early is not None:
        early.discard(lambda broker: broker.close())


@pytest.fixture(scope="session")
def kafka_broker(request: pytest.FixtureRequest) -> Iterator[Broker]:
    """The session's broker (one per backend), started once, closed at the end of the run."""
    config = request.config
    param = getattr(request, "param", None)
    early = config.stash.get(_EARLY_BROKER_KEY, None) if param is None else None
    broker = early.take() if early is not None else None
    if broker is None:
        broker = _start_session_broker(config, param)
    config.stash.setdefault(_BROKERS_KEY, []).append(broker)
    try:
        yield broker
    finally:
        config.stash[_BROKERS_KEY].remove(broker)
        _release_spark_clients()
        broker.close()


def _shared_kafka(config: pytest.Config, backend: str, options: dict[str, object]) -> Broker | None:
    """Under xdist, a backend that can be shared (`kafka`) is one broker for all workers.

    Not with security options: their certificates and users belong to one broker
    object; such runs start a broker per worker, as without xdist.
    """
    import os

    workerinput = getattr(config, "workerinput", None)
    if (
        Capability.SHARED_BY_WORKERS not in capabilities_of(backend)
        or workerinput is None
        or set(options) - {"config"}
    ):
        return None
    from kafkatest.brokers.config import kafka_settings
    from kafkatest.brokers.shared_kafka import SharedKafkaBroker, run_directory

    settings = kafka_settings(options.get("config"))  # type: ignore[arg-type]
    directory = run_directory(str(workerinput["testrunuid"]), settings)
    # xdist's popen workers are children of the controller: its pid outlives them all.
    return SharedKafkaBroker(directory, os.getppid(), settings)


def _release_spark_clients() -> None:
    """Spark's cached Kafka clients go before the broker does (no reconnect warnings)."""
    import sys

    if "pyspark" in sys.modules:  # never import (let alone start) Spark just for this
        from kafkatest.spark import release_kafka_clients

        with contextlib.suppress(Exception):
            release_kafka_clients()


@pytest.fixture
def kafka_backend(kafka_broker: Broker) -> str:
    """Name of the backend this test runs on (emulator, kafka, container, external)."""
    return kafka_broker.backend


@pytest.fixture(autouse=True)
def _kafkatest_backend_filter(request: pytest.FixtureRequest) -> None:
    """Skip a test marked ``kafka_backends(...)`` on a backend it does not list, and one
    marked ``kafka_min_version(v, why)`` on a real Kafka older than `v`."""
    if "kafka_broker" not in request.fixturenames:
        return
    marker = request.node.get_closest_marker("kafka_backends")
    if marker is not None:
        backend = request.getfixturevalue("kafka_broker").backend
        if backend not in marker.args:
            pytest.skip(
                f"needs the {' or '.join(marker.args)} backend: it uses what only they can do"
            )
    minimum = request.node.get_closest_marker("kafka_min_version")
    if minimum is not None:
        broker = request.getfixturevalue("kafka_broker")
        if broker.can(Capability.KAFKA_VERSION):
            from kafkatest.jars.coordinates import kafka_version, release_tuple

            running = getattr(broker, "version", None) or kafka_version()
            if release_tuple(running) < release_tuple(str(minimum.args[0])):
                why = minimum.args[1] if len(minimum.args) > 1 else "it uses a newer feature"
                pytest.skip(f"needs Apache Kafka {minimum.args[0]}+ (this run: {running}): {why}")


@pytest.fixture(autouse=True)
def _kafkatest_broker_clock_undone(request: pytest.FixtureRequest) -> Iterator[None]:
    """What a test does to `kafka_broker.clock` is undone after it: the session's broker
    is shared, and a clock left advanced would age the next test's records at once."""
    if "kafka_broker" not in request.fixturenames:
        yield
        return
    broker = request.getfixturevalue("kafka_broker")
    if not (isinstance(broker, Broker) and broker.can(Capability.CLOCK)):
        yield
        return
    frozen_at_start = broker.clock.frozen
    yield
    with contextlib.suppress(Exception):  # a test that closed the broker has no clock left
        if broker.clock.moved:
            broker.clock.reset(frozen=frozen_at_start)


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

    Each call creates a topic unique to this test; all are deleted at teardown, after
    `spark` has stopped the test's streaming queries (in whichever order it asks for
    the two), so that no consumer of theirs creates a deleted topic again.
    """
    created: list[str] = []
    request.node.stash[TEST_TOPICS_KEY] = created

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


@pytest.fixture
def kafka_faults(kafka_broker: Broker) -> Iterator[Faults]:
    """`faults_for(kafka_broker)`; every fault still active is cleared after the test."""
    from kafkatest.faults import faults_for

    faults = faults_for(kafka_broker)
    try:
        yield faults
    finally:
        faults.clear()


@pytest.fixture(scope="session")
def schema_registry() -> Iterator[SchemaRegistryServer]:
    """An embedded Confluent-compatible Schema Registry on loopback (``.url``), started
    only by tests that ask for it and shared by the run."""
    from kafkatest.schema_registry import start_schema_registry

    with start_schema_registry() as server:
        yield server
