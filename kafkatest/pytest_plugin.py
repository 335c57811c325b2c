"""pytest fixtures for Kafka + PySpark tests (registered through the pytest11 entry point).

A thin layer: every fixture wraps a plain library call, so the same things work in
scripts and other test runners. One broker and one SparkSession serve the whole
session (both are slow to start); tests are isolated by unique topic names and a
fresh checkpoint directory each.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import re
import uuid
from collections.abc import Callable, Generator, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from kafkatest.background_start import BackgroundStart
from kafkatest.brokers.base import Broker
from kafkatest.brokers.registry import BACKENDS, default_backend, start_broker

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from kafkatest.faults import Faults
    from kafkatest.schema_registry import SchemaRegistryServer

_BROKERS_KEY = pytest.StashKey[list[Broker]]()
_EARLY_BROKER_KEY = pytest.StashKey["BackgroundStart[Broker]"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "kafka_broker_config",
        type="linelist",
        default=[],
        help="Kafka broker properties (name=value, one a line) for every broker the run starts",
    )
    group = parser.getgroup("kafkatest", "Kafka + PySpark testing")
    group.addoption(
        "--kafka-backend",
        default=None,
        help=(
            "broker(s) to run tests against: one of "
            f"{', '.join(BACKENDS)}, or several joined by commas to run every broker test "
            f"on each (default: {default_backend()}; env KAFKATEST_BACKEND)"
        ),
    )
    group.addoption(
        "--emulator-brokers",
        type=int,
        default=1,
        help="broker ids the emulator serves, each on its own port, leaders spread (default 1)",
    )
    group.addoption(
        "--kafka-advertised-host",
        default=None,
        help="address the emulator and kafka backends listen on and advertise (default "
        "127.0.0.1): one that executors of a Spark cluster on other machines can reach. "
        "The brokers have no authentication unless asked for: only on a trusted network",
    )
    group.addoption(
        "--kafka-brokers",
        type=int,
        default=1,
        help="brokers of the kafka backend: N > 1 runs an N-node KRaft cluster with a "
        "dedicated controller (default 1: one combined node)",
    )
    group.addoption(
        "--kafkatest-reports",
        default=None,
        help="directory for the reports of failed delivery assertions (default kafkatest-reports)",
    )
    group.addoption(
        "--kafka-log-level",
        default=None,
        help=(
            "what Spark prints on the console: ERROR (default), WARN, INFO, DEBUG; the full "
            "log goes to a file named in failing tests' reports (env KAFKATEST_LOG_LEVEL)"
        ),
    )
    group.addoption(
        "--kafka-security",
        default=None,
        help=(
            "the session broker's listener: PLAINTEXT (default), SSL, SASL_PLAINTEXT or "
            "SASL_SSL (ini: kafka_security; env KAFKATEST_SECURITY). Tests reach it with "
            "kafka_broker.client_config(user) and kafka_broker.spark_options(user)"
        ),
    )
    group.addoption(
        "--kafka-sasl-mechanism",
        default=None,
        help=(
            "SASL mechanism(s) of a SASL listener, comma-separated: PLAIN, SCRAM-SHA-256, "
            "SCRAM-SHA-512 (default PLAIN; ini: kafka_sasl_mechanisms)"
        ),
    )
    group.addoption(
        "--kafka-user",
        action="append",
        default=None,
        help="NAME:PASSWORD of a user of a SASL listener (repeatable; ini: kafka_users)",
    )
    parser.addini("kafka_security", "default of --kafka-security", default="")
    parser.addini("kafka_sasl_mechanisms", "default of --kafka-sasl-mechanism", default="")
    parser.addini("kafka_users", "NAME:PASSWORD lines, default of --kafka-user", type="linelist")
    group.addoption(
        "--kafka-bootstrap",
        default=None,
        help="host:port of an existing cluster, for --kafka-backend=external",
    )
    group.addoption(
        "--spark-remote",
        default=None,
        help=(
            "run the spark fixture over Spark Connect: 'local' (a local Connect server with "
            "the connector) or sc://host:port (ini: spark_remote; env KAFKATEST_SPARK_REMOTE); "
            "default: the warm server of `kafkatest spark-server start` if one runs, 'off' "
            "to ignore it"
        ),
    )
    parser.addini("spark_remote", "default of --spark-remote", default="")
    group.addoption(
        "--spark-master",
        default=None,
        help=(
            "the spark fixture's master: local[N] (default local[2]), local-cluster[W,C,M] "
            "(executors in their own JVMs), spark://host:port, or standalone[W] (kafkatest "
            "starts a master and W workers from the installed PySpark) (ini: spark_master; env "
            "KAFKATEST_SPARK_MASTER)"
        ),
    )
    parser.addini("spark_master", "default of --spark-master", default="")
    parser.addini(
        "spark_extras",
        "Spark modules the spark fixture attaches next to the connector: avro, protobuf "
        "(for from_avro / from_protobuf; env KAFKATEST_SPARK_EXTRAS wins)",
        type="args",
        default=[],
    )


#: More emulated brokers than this is a typo, not a cluster (each takes a port).
MAX_EMULATOR_BROKERS = 64


def pytest_configure(config: pytest.Config) -> None:
    selected_backends(config)  # a misspelt backend stops the run before anything starts
    _check_options(config)
    _check_security(config)
    _set_log_level(config)
    for marker in (
        "kafka_backends(*names): run this test only on these broker backends",
        "kafka_broker_config(settings): run this test on a broker started with these Kafka "
        "broker properties (shared by the tests that ask for the same ones)",
        "kafka_min_version(version, why): skip on the kafka backend when it runs an older "
        "Apache Kafka (KAFKATEST_KAFKA_VERSION)",
    ):
        config.addinivalue_line("markers", marker)


def _set_log_level(config: pytest.Config) -> None:
    """--kafka-log-level becomes KAFKATEST_LOG_LEVEL before Spark (or Kafka) starts."""
    import os

    from kafkatest.spark.logs import LEVELS, console_level

    level = config.getoption("--kafka-log-level")
    if level and level.upper().replace("WARNING", "WARN") not in LEVELS:
        raise pytest.UsageError(
            f"--kafka-log-level={level!r} is not a log level: use one of {', '.join(LEVELS)}"
        )
    if level:
        os.environ["KAFKATEST_LOG_LEVEL"] = level.upper()
    try:
        console_level()
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def _check_options(config: pytest.Config) -> None:
    """Bad option values are one usage error at start, naming the option."""
    brokers = config.getoption("--emulator-brokers")
    if not 1 <= brokers <= MAX_EMULATOR_BROKERS:
        raise pytest.UsageError(
            f"--emulator-brokers={brokers}: the emulator serves 1 to {MAX_EMULATOR_BROKERS} "
            "brokers (default 1; 3 to test leader moves)"
        )
    from kafkatest.brokers.config import MAX_KAFKA_BROKERS

    kafka_brokers = config.getoption("--kafka-brokers")
    if not 1 <= kafka_brokers <= MAX_KAFKA_BROKERS:
        raise pytest.UsageError(
            f"--kafka-brokers={kafka_brokers}: the kafka backend runs 1 to {MAX_KAFKA_BROKERS} "
            "brokers (default 1; 3 to test leader moves and broker loss)"
        )
    bootstrap = config.getoption("--kafka-bootstrap")
    if bootstrap is not None:
        for address in bootstrap.split(","):
            host, _, port = address.strip().rpartition(":")
            if not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise pytest.UsageError(
                    f"--kafka-bootstrap={bootstrap!r}: give host:port[,host:port] "
                    f"({address.strip()!r} is not host:port)"
                )
    if "external" in selected_backends(config) and not bootstrap:
        raise pytest.UsageError(
            "--kafka-backend=external needs --kafka-bootstrap host:port of the cluster"
        )
    master = spark_master(config)
    if not _MASTER.fullmatch(master):
        raise pytest.UsageError(
            f"--spark-master={master!r}: give local[N], local-cluster[W,C,M] (workers, "
            "cores and MB each), spark://host:port or standalone[W] (a cluster of W workers, "
            "1 to 8, that kafkatest starts)"
        )
    remote = spark_remote(config)
    if remote and not (remote == "local" or remote.startswith(("local[", "sc://"))):
        raise pytest.UsageError(
            f"--spark-remote={remote!r}: give local, local[N], sc://host:port or off"
        )
    _warn_if_executors_cannot_reach_the_broker(config, master, remote)
    reports = config.getoption("--kafkatest-reports")
    if reports and Path(reports).exists() and not Path(reports).is_dir():
        raise pytest.UsageError(
            f"--kafkatest-reports={reports!r} is a file; give a directory for the reports"
        )


def _warn_if_executors_cannot_reach_the_broker(
    config: pytest.Config, master: str, remote: str
) -> None:
    """A Spark master or Connect server on another machine cannot reach a broker that
    advertises loopback: its executors would time out connecting, with nothing to say why."""
    where = re.fullmatch(r"(?:spark|sc)://([^:/]+|\[[^\]]+\])(?::\d+)?/?", remote or master)
    if where is None:
        return
    from kafkatest.emulator.exposure import is_loopback  # imports the emulator package

    if is_loopback(where.group(1)):
        return
    advertised = config.getoption("--kafka-advertised-host") or "127.0.0.1"
    if not is_loopback(advertised):
        return
    config.issue_config_time_warning(
        UserWarning(
            f"Spark runs at {remote or master}, but the broker advertises {advertised}: "
            "executors on another machine cannot reach loopback. Pass "
            "--kafka-advertised-host with this machine's address (or use "
            "--kafka-backend=external with a cluster both reach)."
        ),
        stacklevel=2,
    )


#: Masters the spark fixture accepts; standalone[W] is a cluster kafkatest starts.
_STANDALONE = re.compile(r"standalone\[([1-8])\]")
_MASTER = re.compile(
    r"local(\[(\d+|\*)\])?|local-cluster\[\d+, *\d+, *\d+\]|spark://[^/\s]+:\d+|"
    + _STANDALONE.pattern
)


def spark_master(config: pytest.Config) -> str:
    """The spark fixture's master (local[2] unless an option, ini or env says)."""
    import os

    return str(
        config.getoption("--spark-master")
        or config.getini("spark_master")
        or os.environ.get("KAFKATEST_SPARK_MASTER", "")
        or "local[2]"
    )


def spark_remote(config: pytest.Config) -> str:
    """The Spark Connect server the spark fixture uses ('' for classic local Spark)."""
    import os

    remote = str(
        config.getoption("--spark-remote")
        or config.getini("spark_remote")
        or os.environ.get("KAFKATEST_SPARK_REMOTE", "")
    )
    if remote == "off":
        return ""
    if not remote:
        from kafkatest.spark.server import usable_server

        warm = usable_server()  # `kafkatest spark-server start` (warm mode)
        remote = warm.remote if warm is not None else ""
    return remote


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Say where Spark runs when it is not this process: a warm server is found, not
    asked for, so a user must see that this run uses it (and how not to)."""
    from kafkatest.spark.server import running_server, usable_server

    lines = []
    explicit = config.getoption("--spark-remote") or config.getini("spark_remote")
    running = None if explicit else running_server()
    if running is not None:
        if usable_server() is None:
            lines.append(
                f"kafkatest: a warm Spark Connect server runs PySpark {running.pyspark}, not "
                "this environment's; Spark starts in this process "
                "(kafkatest spark-server stop, then start it again here)"
            )
        elif spark_remote(config) == running.remote:
            lines.append(
                f"kafkatest: spark runs on the warm Spark Connect server {running.remote} "
                f"(pid {running.pid}); --spark-remote=off to start Spark in this process"
            )
    return lines


def selected_backends(config: pytest.Config) -> list[str]:
    """The backends named by --kafka-backend (comma-separated), checked."""
    raw = config.getoption("--kafka-backend") or default_backend()
    names = [name.strip() for name in raw.split(",") if name.strip()]
    unknown = [name for name in names if name not in BACKENDS]
    if unknown or not names:
        raise pytest.UsageError(
            f"--kafka-backend: unknown backend {', '.join(unknown) or repr(raw)}; "
            f"choose from {', '.join(BACKENDS)} (comma-separated for several)"
        )
    return names


def _check_security(config: pytest.Config) -> None:
    """A misspelt protocol or mechanism is a usage error before any broker starts."""
    options = security_options(config)
    if not options:
        return
    from kafkatest.errors import BrokerError
    from kafkatest.security import Security

    try:
        Security.of(
            str(options["security_protocol"]),
            options.get("sasl_mechanisms"),  # type: ignore[arg-type]
            options.get("users"),  # type: ignore[arg-type]
        )
    except BrokerError as exc:
        raise pytest.UsageError(f"--kafka-security: {exc}") from None


def security_options(config: pytest.Config) -> dict[str, object]:
    """start_broker's security keywords from the command line, ini file or environment."""
    import os

    protocol = (
        config.getoption("--kafka-security")
        or config.getini("kafka_security")
        or os.environ.get("KAFKATEST_SECURITY")
        or "PLAINTEXT"
    )
    if protocol.upper() == "PLAINTEXT":
        return {}
    mechanisms = config.getoption("--kafka-sasl-mechanism") or config.getini(
        "kafka_sasl_mechanisms"
    )
    users: dict[str, str] = {}
    for entry in config.getoption("--kafka-user") or config.getini("kafka_users") or []:
        name, sep, password = str(entry).partition(":")
        if not sep or not name or not password:
            raise pytest.UsageError(f"--kafka-user: expected NAME:PASSWORD, got {entry!r}")
        users[name] = password
    options: dict[str, object] = {"security_protocol": protocol}
    if mechanisms:
        options["sasl_mechanisms"] = mechanisms
    if users:
        options["users"] = users
    return options


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


def _ini_config(config: pytest.Config) -> dict[str, str]:
    """The ``kafka_broker_config`` ini lines (``name=value``), for every broker of the run."""
    settings: dict[str, str] = {}
    for line in config.getini("kafka_broker_config"):
        name, sep, value = str(line).partition("=")
        if not sep or not name.strip():
            raise pytest.UsageError(
                f"kafka_broker_config: {line!r} is not name=value (e.g. auto.create.topics.enable=false)"
            )
        settings[name.strip()] = value.strip()
    return settings


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
    if backend == "emulator":
        options["brokers"] = config.getoption("--emulator-brokers")
    if backend == "kafka" and config.getoption("--kafka-brokers") > 1:
        options["brokers"] = config.getoption("--kafka-brokers")
    advertised = config.getoption("--kafka-advertised-host")
    if advertised and backend in ("emulator", "kafka"):
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
        broker = start_broker(backend, config.getoption("--kafka-bootstrap"), **options)
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
        if "kafka_broker" in names and "kafka_broker" not in getattr(callspec, "params", {}):
            default_broker = True
        spark = spark or "spark_session" in names
    if default_broker and spark:
        config.stash[_EARLY_BROKER_KEY] = BackgroundStart(
            lambda: _start_session_broker(config, None), name="kafkatest-broker-start"
        )


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


def xdist_worker(config: pytest.Config) -> str | None:
    """This process's pytest-xdist worker id (gw0, gw1, ...), or None outside xdist."""
    workerinput = getattr(config, "workerinput", None)
    return None if workerinput is None else str(workerinput.get("workerid", "gw"))


def _shared_kafka(config: pytest.Config, backend: str, options: dict[str, object]) -> Broker | None:
    """Under xdist, the `kafka` backend is one broker for all workers of the run.

    Not with security options: their certificates and users belong to one broker
    object; such runs start a broker per worker, as without xdist.
    """
    import os

    workerinput = getattr(config, "workerinput", None)
    if backend != "kafka" or workerinput is None or set(options) - {"config"}:
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
        if broker.backend == "kafka":
            from kafkatest.jars.coordinates import kafka_version

            running = getattr(broker, "version", None) or kafka_version()
            if _version_tuple(running) < _version_tuple(str(minimum.args[0])):
                why = minimum.args[1] if len(minimum.args) > 1 else "it uses a newer feature"
                pytest.skip(f"needs Apache Kafka {minimum.args[0]}+ (this run: {running}): {why}")


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


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


@pytest.fixture(scope="session")
def spark_session(pytestconfig: pytest.Config) -> Iterator[SparkSession]:
    """The run's one SparkSession (local[2], Kafka connector attached, UI off), or a
    Spark Connect session with --spark-remote."""
    from kafkatest.spark.session import kafka_spark_session, stop_spark_session

    remote = spark_remote(pytestconfig)
    cluster = None
    if remote:
        from kafkatest.spark.connect import connect_spark_session
        from kafkatest.spark.server import usable_server

        warm = usable_server()
        # The warm server has the connector on its class path already.
        session = connect_spark_session(
            remote, send_connector=warm is None or warm.remote != remote
        )
    else:
        import os

        extras = pytestconfig.getini("spark_extras")
        if extras and "KAFKATEST_SPARK_EXTRAS" not in os.environ:
            os.environ["KAFKATEST_SPARK_EXTRAS"] = ",".join(extras)
        master = spark_master(pytestconfig)
        conf: dict[str, str] = {}
        workers = _STANDALONE.fullmatch(master)
        if workers:
            from kafkatest.spark.standalone import StandaloneCluster

            cluster = StandaloneCluster(int(workers.group(1)))
            master, conf = cluster.start(), cluster.session_conf
        try:
            session = kafka_spark_session(master=master, conf=conf)
        except BaseException:
            if cluster is not None:
                cluster.close()
            raise
    try:
        yield session
    finally:
        try:
            stop_spark_session(session)
        finally:
            if cluster is not None:
                cluster.close()


@pytest.fixture
def spark(spark_session: SparkSession) -> Iterator[SparkSession]:
    """The shared SparkSession; streaming queries a test leaves running are stopped.

    The connector's cached Kafka producers are closed after each test too: they are
    keyed by the job's options, not its topics, so a producer one test left in a fatal
    state (Spark 3.5's after an authorization failure: "Cannot execute transactional
    method because we are in an error state") would otherwise fail the next test
    that writes with the same options.
    """
    from kafkatest.spark import release_kafka_clients

    yield spark_session
    for query in spark_session.streams.active:
        with contextlib.suppress(Exception):
            query.stop()
    with contextlib.suppress(Exception):
        release_kafka_clients()


@pytest.fixture
def checkpoint_dir(tmp_path: Path) -> Path:
    """A fresh, empty checkpoint location for this test's streaming query."""
    path = tmp_path / "checkpoint"
    path.mkdir()
    return path


def _save_delivery_report(
    item: pytest.Item, error: BaseException, report: pytest.TestReport
) -> None:
    """A failed delivery assertion leaves its JSON and HTML report for the user to open."""
    from kafkatest.assertions import DeliveryAssertionError

    if not isinstance(error, DeliveryAssertionError):
        return
    root = Path(item.config.getoption("--kafkatest-reports") or "kafkatest-reports")
    # Relative to where pytest was invoked (the xdist controller's directory), and
    # named by worker too: `--dist each` runs one test id on every worker.
    if not root.is_absolute() and Path.cwd() != item.config.invocation_params.dir:
        root = item.config.invocation_params.dir / root
    worker = xdist_worker(item.config)
    name = item.nodeid + (f"@{worker}" if worker else "")
    directory = root / re.sub(r"[^A-Za-z0-9._@-]+", "_", name)
    with contextlib.suppress(OSError):
        paths = error.report.write(directory)
        listing = "\n".join(f"  {kind}: {path}" for kind, path in paths.items())
        report.sections.append(("kafkatest delivery report", listing))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """On failure, attach the broker's log tail: the broker's side of the story."""
    report: pytest.TestReport = yield
    if report.failed and call.excinfo is not None:
        _save_delivery_report(item, call.excinfo.value, report)
    if report.failed and "spark" in getattr(item, "fixturenames", ()):
        from kafkatest.spark.logs import spark_log_file

        log_file = spark_log_file()
        if log_file is not None:
            report.sections.append(("kafkatest spark log", f"Spark's full log: {log_file}"))
    if report.failed:
        for broker in item.config.stash.get(_BROKERS_KEY, []):
            with contextlib.suppress(Exception):
                text = broker.diagnostics()
                if text:
                    report.sections.append((f"kafkatest {broker.backend} broker", text))
    return report
