"""A SparkSession for tests: local, quiet, quick, with the Kafka connector jars.

Spark takes seconds to start, so one session serves a whole test run; settings here
trade production realism for speed only where a job cannot observe the difference
(UI off, two shuffle partitions, loopback driver).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafkatest._ground.tempdirs import owned_tempdir, remove
from kafkatest.config import environment, jvm_flags_for_tests
from kafkatest.spark.cds import Archive, driver_archive
from kafkatest.spark.checkpoints import checkpoint_conf
from kafkatest.spark.interrupts import (
    after_interrupt_settled,
    interrupt_without_reentry,
    stop_queries,
)
from kafkatest.spark.logs import log4j2_options

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

TEST_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
    "spark.sql.streaming.stopActiveRunOnRestart": "true",
    "spark.sql.adaptive.enabled": "false",
    "spark.driver.memory": "2g",
    # A test that expects a data-loss failure must not wait Spark's default 120 s poll.
    "spark.network.timeout": "120s",
}

_scratch: Path | None = None
#: The classic session whose JVM serves this process's local Spark Connect session
#: (`kafkatest.spark.connect`): stopped after that session.
_connect_server: SparkSession | None = None


def hold_connect_server(server: SparkSession | None) -> None:
    """Remember (or forget) the Spark serving a local Connect session, so that
    `stop_spark_session` of the Connect session stops it too."""
    global _connect_server
    _connect_server = server


#: Connect sessions whose server runs in this process's JVM beside a classic session
#: (`kafkatest.spark.connect.connect_session_beside`): id(session) -> that JVM.
_served_here: dict[int, Any] = {}


def jvm_of(session: Any) -> Any:
    """The JVM that runs `session`'s queries when it runs in this process (a classic
    session, or a Connect session on a server this process started); else None."""
    jvm = getattr(session, "_jvm", None)
    if jvm is not None:
        return jvm
    if id(session) in _served_here:
        return _served_here[id(session)]
    if _connect_server is not None and type(session).__module__.startswith("pyspark.sql.connect"):
        return getattr(_connect_server, "_jvm", None)
    return None


def connector_conf(mode: str | None = None) -> dict[str, str]:
    """How the connector reaches Spark: resolved jar paths (default) or spark.jars.packages.

    `mode` "packages" (or KAFKATEST_SPARK_JARS=packages) lets Spark's own Ivy resolve
    the coordinate instead; "none" attaches nothing (the user's conf already does).
    """
    mode = mode or environment("KAFKATEST_SPARK_JARS", "resolve")
    if mode == "none":
        return {}
    from kafkatest.jars.resolve import requested_spark_extras

    # KAFKATEST_SPARK_EXTRAS=avro[,protobuf]: spark-avro / spark-protobuf next to the
    # connector, for jobs that decode with from_avro / from_protobuf.
    extras = requested_spark_extras()
    if mode == "packages":
        from kafkatest.jars import spark_connector_coordinate

        return {"spark.jars.packages": spark_connector_coordinate()}
    if mode != "resolve":
        raise ValueError(f"KAFKATEST_SPARK_JARS must be resolve, packages or none, not {mode!r}")
    from kafkatest.jars import spark_connector_jars
    from kafkatest.jars.resolve import spark_extra_jars

    jars = [*spark_connector_jars(), *spark_extra_jars(extras)]
    return {"spark.jars": ",".join(str(jar) for jar in jars)}


def merged_conf(*confs: Mapping[str, str]) -> dict[str, str]:
    """Spark settings, a later one winning, except `spark.jars`: those lists are joined
    (each jar once), so jars a caller adds (Delta's, Spark Connect's server) join the
    connector's instead of replacing them."""
    merged: dict[str, str] = {}
    jars: list[str] = []
    for conf in confs:
        merged.update(conf)
        for jar in conf.get("spark.jars", "").split(","):
            if jar and jar not in jars:
                jars.append(jar)
    if jars:
        merged["spark.jars"] = ",".join(jars)
    return merged


def kafka_spark_session(
    app_name: str = "kafkatest",
    master: str = "local[2]",
    conf: Mapping[str, str] | None = None,
    jars_mode: str | None = None,
) -> SparkSession:
    """Build (or return the running) SparkSession with the Kafka connector attached.

    `conf` wins over kafkatest's settings, but its `spark.jars` join the connector's.
    """
    from pyspark.sql import SparkSession

    global _scratch
    if _scratch is None:
        _scratch = owned_tempdir("kafkatest-spark-")
    settings = merged_conf(
        {
            **TEST_CONF,
            **checkpoint_conf(),
            "spark.sql.warehouse.dir": str(_scratch / "warehouse"),
            "spark.local.dir": str(_scratch / "local"),
            "spark.driver.extraJavaOptions": (
                f"-Dderby.system.home={_scratch / 'derby'} {log4j2_options(_scratch)} "
                + " ".join(jvm_flags_for_tests())
            ),
            **connector_conf(jars_mode),
        },
        conf or {},
    )
    archive = Archive()
    if "spark.driver.extraJavaOptions" not in (conf or {}):  # the user's own JVM options win
        archive = driver_archive(settings, jvm_flags_for_tests())
        settings["spark.driver.extraJavaOptions"] += "".join(f" {o}" for o in archive.java_options)
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no "resolves to loopback" warning
    # Python workers run this interpreter, not the first python3 on PATH (from a virtualenv
    # not activated, another Python with another pyarrow): PySpark reads the variable, and
    # so does a Spark Connect server's JVM for the UDFs it runs.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = builder.getOrCreate()
    archive.started(getattr(session, "_jvm", None))
    after_interrupt_settled(getattr(session, "_jvm", None))  # going on after a Ctrl-C
    interrupt_without_reentry(session)
    explicit = environment("KAFKATEST_SPARK_LOG_LEVEL")
    if explicit:  # the old knob: sets the root level, the file's included
        session.sparkContext.setLogLevel(explicit)
    return session


#: The connector's executor-side producer cache (a Scala object): producers stay open for
#: ``spark.kafka.producer.cache.timeout`` (10 min) after a query, reconnecting to a
#: broker that went away and logging a warning each time.
_PRODUCER_POOL = "org.apache.spark.sql.kafka010.producer.InternalKafkaProducerPool$"


def release_kafka_clients() -> bool:
    """Stop running queries and close the connector's cached producers, if Spark runs.

    Call it before a broker stops, so Spark's clients do not outlive it and print
    "Connection to node 1 could not be established" for minutes. It never starts
    Spark; it returns whether a running local session was found. With executors in
    other JVMs (a cluster) only the driver's queries are stopped.
    """
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    context = SparkContext._active_spark_context
    session = SparkSession.getActiveSession()
    if context is None or session is None:
        return False
    stop_queries(session)
    _close_cached_producers(context._jvm)
    return True


def _close_cached_producers(jvm: Any) -> None:
    with contextlib.suppress(Exception):  # another connector build: its cache times out
        pool_class = (
            jvm.java.lang.Thread.currentThread().getContextClassLoader().loadClass(_PRODUCER_POOL)
        )
        pool_class.getField("MODULE$").get(None).reset()


def stop_spark_session(session: SparkSession | None = None) -> None:
    """Stop queries and the session, and remove the session's scratch space."""
    global _scratch
    from pyspark.sql import SparkSession

    session = session or SparkSession.getActiveSession()
    if session is not None:
        if not releases_its_queries(session):
            stop_queries(session)
        jvm = getattr(session, "_jvm", None)
        if jvm is not None:  # the producer cache outlives session.stop() in this JVM
            _close_cached_producers(jvm)
        session.stop()
        after_interrupt_settled(jvm)
        if jvm is None:
            # A Spark Connect session: the scratch space belongs to the Spark that serves
            # it, stopped here when this process runs it (`--spark-remote=local`) and
            # left alone otherwise (a classic session of this process may still use it).
            if _connect_server is not None:
                server = _connect_server
                hold_connect_server(None)
                stop_spark_session(server)
            return
    if _scratch is not None:
        remove(_scratch)
        _scratch = None


def releases_its_queries(session: SparkSession) -> bool:
    """Whether `session.stop()` itself stops the session's streaming queries.

    A Spark Connect 4.0+ session releases itself on the server as it stops, and the
    server stops the session's queries before it answers (the query "was stopped" on the
    thread that serves the release): asking for the active queries first was one more
    round trip at the end of every run on the warm server. PySpark 3.5's Connect client
    only closes its channel, leaving the queries running until the session times out,
    so there they are stopped one by one as for a local session.
    """
    return bool(getattr(session, "release_session_on_close", False)) and not getattr(
        session, "is_stopped", False
    )
