"""The Spark fixtures: the run's one SparkSession (local, a standalone cluster, or
Spark Connect), a test's view of it, and a fresh checkpoint directory per test."""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from kafkatest.plugin.options import (
    _STANDALONE,
    auto_server_refusal,
    kafkatest_config,
    spark_master,
    spark_remote,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from kafkatest.spark.clock import QueryClock


@pytest.fixture(scope="session")
def spark_session(pytestconfig: pytest.Config) -> Iterator[SparkSession]:
    """The run's one SparkSession (local[2], Kafka connector attached, UI off), or a
    Spark Connect session with --spark-remote."""
    from kafkatest.spark.session import kafka_spark_session, stop_spark_session

    remote = spark_remote(pytestconfig)
    cluster = None
    # Entered as soon as the warm server is chosen, before the Connect session (slow on
    # a loaded machine) is made: its idle stop must not count that time as unused.
    keep_alive = contextlib.ExitStack()
    if not remote and auto_server_refusal(pytestconfig) is None:
        from kafkatest.spark.server import running_server, start_server

        if running_server() is None:  # one of another PySpark is left alone
            settings = kafkatest_config(pytestconfig)
            idle = settings.spark_server_idle_minutes
            remote = start_server(extras=settings.spark_extras, idle_minutes=idle).remote
    if remote:
        from kafkatest.spark.connect import connect_spark_session
        from kafkatest.spark.server import lacking_extras, usable_server

        warm = usable_server()
        if warm is not None and warm.remote == remote:
            refusal = lacking_extras(warm, kafkatest_config(pytestconfig).spark_extras)
            if refusal is not None:
                raise refusal
            keep_alive.enter_context(_using_the_warm_server())
        try:
            # The warm server has the connector on its class path already.
            session = connect_spark_session(
                remote, send_connector=warm is None or warm.remote != remote
            )
        except BaseException:
            keep_alive.close()
            raise
    else:
        import os

        settings = kafkatest_config(pytestconfig)
        if settings.origins["spark_extras"] == "ini spark_extras":
            # the jar resolution below reads the variable (the environment wins: set, it
            # would have been the origin)
            os.environ["KAFKATEST_SPARK_EXTRAS"] = ",".join(settings.spark_extras)
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
        with keep_alive:
            yield session
    finally:
        try:
            stop_spark_session(session)
        finally:
            if cluster is not None:
                cluster.close()


@contextlib.contextmanager
def _using_the_warm_server() -> Iterator[None]:
    """Mark the warm server used now, every half minute while the run lasts (a long run
    is not idle), and at its end, so that its idle stop counts from the last run."""
    import threading

    from kafkatest.spark.server import mark_used

    done = threading.Event()

    def beat() -> None:
        while not done.wait(30):
            mark_used()

    mark_used()
    thread = threading.Thread(target=beat, name="kafkatest-warm-server-use", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        mark_used()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    """A test with Spark and a broker: name the requests Spark's Kafka client is about
    to send to the broker, and those of reading the job's output back, so that the
    broker gets ready for them while the job's start and run in the JVM leave it idle
    (`kafkatest.spark.kafka_protocol`)."""
    result = yield
    funcargs = getattr(item, "funcargs", {})
    if "spark_session" in funcargs and "kafka_broker" in funcargs:
        from kafkatest.brokers.base import Broker

        broker = funcargs["kafka_broker"]
        if isinstance(broker, Broker):  # not a conftest's own kafka_broker
            import pyspark

            from kafkatest.brokers.client import READ_BACK_REQUESTS
            from kafkatest.spark.kafka_protocol import connector_requests

            broker.expect_requests((*connector_requests(pyspark.__version__), *READ_BACK_REQUESTS))
    return result


@pytest.fixture(scope="session")
def local_spark_session(pytestconfig: pytest.Config) -> Iterator[SparkSession]:
    """A local (classic) SparkSession for the tests marked ``local_spark`` in a run whose
    `spark` is Spark Connect: started the first time one asks, stopped with the run."""
    from kafkatest.spark import session as sessions
    from kafkatest.spark.connect import api_of
    from kafkatest.spark.session import kafka_spark_session, stop_spark_session

    with api_of(object()):  # a classic session, beside the Connect one
        session = kafka_spark_session(master=spark_master(pytestconfig))
    # With --spark-remote=local, the Spark serving the Connect session is this process's
    # and is the local session: the Connect session's teardown stops it, not this.
    serving = sessions._connect_server
    shared = serving is not None and serving.sparkContext is session.sparkContext
    try:
        yield session
    finally:
        if not shared:
            stop_spark_session(session)


@pytest.fixture
def spark(request: pytest.FixtureRequest, spark_session: SparkSession) -> Iterator[SparkSession]:
    """The shared SparkSession; streaming queries a test leaves running are stopped.

    A test marked ``local_spark`` gets a local session where the run's is Spark Connect
    (and PySpark's functions build classic columns while it runs).

    The connector's cached Kafka producers are closed after each test too: they are
    keyed by the job's options, not its topics, so a producer one test left in a fatal
    state (Spark 3.5's after an authorization failure: "Cannot execute transactional
    method because we are in an error state") would otherwise fail the next test
    that writes with the same options.
    """
    from kafkatest.spark import release_kafka_clients
    from kafkatest.spark.connect import api_of, is_connect_session

    if "kafka_topic" in request.fixturenames:
        # Made first, so torn down last: the test's queries stop before its topics go,
        # whichever order the test asks for the two (their consumers, polling on, would
        # create a deleted topic again).
        request.getfixturevalue("kafka_topic")
    session = spark_session
    if request.node.get_closest_marker("local_spark") and is_connect_session(session):
        session = request.getfixturevalue("local_spark_session")
    with api_of(session):
        yield session
    for query in session.streams.active:
        with contextlib.suppress(Exception):
            query.stop()
    with contextlib.suppress(Exception):
        release_kafka_clients()


@pytest.fixture
def spark_clock(spark: SparkSession) -> Iterator[QueryClock]:
    """Processing time for the queries this test starts: `advance(minutes=30)` moves it.

    `current_timestamp()`, processing-time triggers and processing-time state timeouts
    follow it, so a 30-minute session timeout closes in a test that takes seconds.
    Local sessions only (Spark Connect is refused with the reason).
    """
    from kafkatest.spark.clock import query_clock

    with query_clock(spark) as clock:
        yield clock


@pytest.fixture
def checkpoint_dir(tmp_path: Path) -> Path:
    """A fresh, empty checkpoint location for this test's streaming query."""
    path = tmp_path / "checkpoint"
    path.mkdir()
    return path
