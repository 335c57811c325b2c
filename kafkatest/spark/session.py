"""A SparkSession for tests: local, quiet, quick, with the Kafka connector jars.

Spark takes seconds to start, so one session serves a whole test run; settings here
trade production realism for speed only where a job cannot observe the difference
(UI off, two shuffle partitions, loopback driver).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafkatest.spark.logs import log4j2_options
from kafkatest.tempdirs import owned_tempdir, remove

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


def connector_conf(mode: str | None = None) -> dict[str, str]:
    """How the connector reaches Spark: resolved jar paths (default) or spark.jars.packages.

    `mode` "packages" (or KAFKATEST_SPARK_JARS=packages) lets Spark's own Ivy resolve
    the coordinate instead; "none" attaches nothing (the user's conf already does).
    """
    mode = mode or os.environ.get("KAFKATEST_SPARK_JARS", "resolve")
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


def kafka_spark_session(
    app_name: str = "kafkatest",
    master: str = "local[2]",
    conf: Mapping[str, str] | None = None,
    jars_mode: str | None = None,
) -> SparkSession:
    """Build (or return the running) SparkSession with the Kafka connector attached."""
    from pyspark.sql import SparkSession

    global _scratch
    if _scratch is None:
        _scratch = owned_tempdir("kafkatest-spark-")
    settings = {
        **TEST_CONF,
        "spark.sql.warehouse.dir": str(_scratch / "warehouse"),
        "spark.local.dir": str(_scratch / "local"),
        "spark.driver.extraJavaOptions": (
            f"-Dderby.system.home={_scratch / 'derby'} {log4j2_options(_scratch)}"
        ),
        **connector_conf(jars_mode),
        **(conf or {}),
    }
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no "resolves to loopback" warning
    session = builder.getOrCreate()
    _interrupt_without_reentry(session)
    explicit = os.environ.get("KAFKATEST_SPARK_LOG_LEVEL")
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
    _stop_queries(session)
    jvm: Any = context._jvm
    try:
        pool_class = (
            jvm.java.lang.Thread.currentThread().getContextClassLoader().loadClass(_PRODUCER_POOL)
        )
        pool_class.getField("MODULE$").get(None).reset()
    except Exception:  # another connector build: leave its cache to its own timeout
        return True
    return True


def stop_spark_session(session: SparkSession | None = None) -> None:
    """Stop queries and the session, and remove the session's scratch space."""
    global _scratch
    from pyspark.sql import SparkSession

    session = session or SparkSession.getActiveSession()
    if session is not None:
        release_kafka_clients()  # the producer cache outlives session.stop() in this JVM
        _stop_queries(session)
        session.stop()
    if _scratch is not None:
        remove(_scratch)
        _scratch = None


#: How long stopping waits for queries that are already ending (see `_stop_queries`).
QUERY_END_WAIT_S = 10


def _stop_queries(session: SparkSession) -> None:
    """Stop the active queries, and wait until those already ending have ended.

    A query that fails (Ctrl-C cancels every job) leaves `streams.active` before
    its stream thread has finished ending: that thread still reports the end to
    the state-store coordinator. Stopping the context under it made the thread die
    with "RpcEnv already stopped" and the JVM print its Java stack trace after
    "kafkatest: interrupted". Bounded, so a stuck thread cannot hang the stop.
    """
    for query in session.streams.active:
        query.stop()
    jvm: Any = getattr(session, "_jvm", None)
    if jvm is None:  # Spark Connect: the queries' threads are the server's
        return
    with contextlib.suppress(Exception):
        deadline_ms = int(QUERY_END_WAIT_S * 1000)
        started = jvm.java.lang.System.currentTimeMillis()
        for thread in jvm.java.lang.Thread.getAllStackTraces().keySet().toArray():
            if thread.getName().startswith("stream execution thread"):
                left = deadline_ms - (jvm.java.lang.System.currentTimeMillis() - started)
                thread.join(max(left, 1))


def _interrupt_without_reentry(session: SparkSession) -> None:
    """Ctrl-C raises KeyboardInterrupt at once; Spark's jobs are cancelled from another thread.

    PySpark's own SIGINT handler calls cancelAllJobs() inside the signal handler, on
    the py4j connection the interrupted call is still reading from: py4j then logs
    "reentrant call" tracebacks and the interrupt surfaces wrapped in them. Here the
    cancellation runs on a thread of its own (its own py4j connection) and the
    interrupted thread only gets the KeyboardInterrupt.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set on the main thread
    context = session.sparkContext

    def cancel_quietly() -> None:
        with contextlib.suppress(Exception):
            context.cancelAllJobs()

    def on_interrupt(signum: int, frame: object) -> None:
        _Py4JInterruptNoise.interrupted = True
        threading.Thread(target=cancel_quietly, name="kafkatest-cancel", daemon=True).start()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_interrupt)
    redeliver_interrupts_lost_in_finalizers()
    # A filter on a logger sees only what is logged on that logger, not what its
    # children propagate: so on each logger py4j writes these records to.
    for name in ("", "py4j", "py4j.java_gateway", "py4j.clientserver"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _Py4JInterruptNoise) for f in logger.filters):
            logger.addFilter(_Py4JInterruptNoise())


def redeliver_interrupts_lost_in_finalizers() -> None:
    """Make a Ctrl-C that lands inside a finalizer interrupt the run all the same.

    py4j frees each Java object from a weakref callback, which talks to the JVM, so
    a Spark driver spends much of its time in finalizers. Python drops an exception
    raised in one ("Exception ignored in: <function JavaObject.__init__...>"): a
    Ctrl-C landing there was lost and the run went on to its end. This hook sees
    that dropped KeyboardInterrupt and sends the signal again, to be raised in the
    code the finalizer interrupted. Installed once; other unraisable exceptions go
    to the hook that was there before.
    """
    import signal
    import sys
    import threading

    previous = sys.unraisablehook
    if getattr(previous, "_kafkatest_redelivers_interrupts", False):
        return

    def hook(unraisable: Any) -> None:
        if unraisable.exc_type is not KeyboardInterrupt:
            previous(unraisable)
            return
        # From another thread, a moment later: a signal sent now could be handled
        # inside the same finalizer, or the next one of this collection.
        threading.Timer(0.01, os.kill, (os.getpid(), signal.SIGINT)).start()

    hook._kafkatest_redelivers_interrupts = True  # type: ignore[attr-defined]
    sys.unraisablehook = hook


class _Py4JInterruptNoise(logging.Filter):
    """Drops py4j's ERROR-level tracebacks of our own KeyboardInterrupt.

    py4j logs one ("KeyboardInterrupt while sending command.") while it closes the
    interrupted connection, and, once interrupted, another when the JVM has closed
    its end first ("Exception occurred while shutting down connection": a broken
    pipe); the interrupt itself still propagates and says everything they would.
    """

    #: Set by the SIGINT handler: only then is a broken connection our own doing.
    interrupted = False

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message == "KeyboardInterrupt while sending command.":
            return False
        return not (
            _Py4JInterruptNoise.interrupted
            and message == "Exception occurred while shutting down connection"
        )
