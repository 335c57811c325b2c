"""A SparkSession for tests: local, quiet, quick, with the Kafka connector jars.

Spark takes seconds to start, so one session serves a whole test run; settings here
trade production realism for speed only where a job cannot observe the difference
(UI off, two shuffle partitions, loopback driver).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafkatest.config import environment, jvm_flags_for_tests
from kafkatest.spark.cds import Archive, driver_archive
from kafkatest.spark.checkpoints import checkpoint_conf
from kafkatest.spark.logs import CONSOLE_APPENDER, console_level, log4j2_options, spark_log_file
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


#: The thread Ctrl-C started to cancel Spark's jobs (see `_interrupt_without_reentry`).
_cancelling: threading.Thread | None = None


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
    _after_interrupt_settled(getattr(session, "_jvm", None))  # going on after a Ctrl-C
    _interrupt_without_reentry(session)
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
    _stop_queries(session)
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
            _stop_queries(session)
        jvm = getattr(session, "_jvm", None)
        if jvm is not None:  # the producer cache outlives session.stop() in this JVM
            _close_cached_producers(jvm)
        session.stop()
        _after_interrupt_settled(jvm)
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


#: How long stopping waits for queries that are still starting or already ending.
QUERY_END_WAIT_S = 10

#: py4j serves each Python thread's connection on a JVM thread of its own, whose
#: stack starts (just above Thread.run) in the connection's loop and, while it runs
#: one of Python's calls, passes through CallCommand.
_PY4J_CONNECTION = "py4j.ClientServerConnection"
_PY4J_CALL = "py4j.commands.CallCommand"


def _stop_queries(session: SparkSession) -> None:
    """Stop the active queries, and wait until those starting or ending are done.

    Ctrl-C leaves the JVM mid-way: a `start()` it interrupted still runs there and
    registers its query after Python has looked; a query that failed (Ctrl-C
    cancels every job) has left `streams.active` while its thread still reports its
    end to the state-store coordinator. Stopping the context under either made that
    thread die with "SparkEnv is null" or "RpcEnv already stopped" and the JVM print
    a stack trace after "kafkatest: interrupted". So this repeats until no query is
    active and no stream thread is alive, and, after a Ctrl-C, until no other call
    from Python is still running in the JVM (without one, a call another thread
    makes is that thread's business). Bounded, so a stuck thread cannot hang the stop.
    """
    deadline = time.monotonic() + QUERY_END_WAIT_S
    interrupted = _cancelling is not None
    if _cancelling is not None:  # the console moved and jobs cancelled first
        _cancelling.join(QUERY_END_WAIT_S)
    jvm: Any = getattr(session, "_jvm", None)
    while True:
        active = session.streams.active
        for query in active:
            with contextlib.suppress(Exception):  # it may end on its own meanwhile
                query.stop()
        if jvm is None:  # Spark Connect: the queries' threads are the server's
            return
        try:
            stream_threads, calls_in_flight = _unfinished_jvm_work(jvm, interrupted)
        except Exception:  # the JVM is going away: nothing left to wait for
            return
        left_s = deadline - time.monotonic()
        if (not active and not stream_threads and not calls_in_flight) or left_s <= 0:
            return
        for thread in stream_threads:
            thread.join(max(1, int(left_s * 1000)))
        if calls_in_flight:
            time.sleep(0.05)


def _unfinished_jvm_work(jvm: Any, count_calls: bool) -> tuple[list[Any], int]:
    """The JVM's live stream threads, and (if asked) how many other calls from Python it runs.

    py4j serves each connection on an unnamed thread ("Thread-N") that idles in a
    socket read; one running a call has CallCommand a few frames above its bottom.
    Only those threads, and only those few frames, are read: each is a round trip.
    """
    this_thread = jvm.java.lang.Thread.currentThread()
    stream_threads = []
    calls_in_flight = 0
    traces = jvm.java.lang.Thread.getAllStackTraces()
    for thread in traces.keySet().toArray():
        name = thread.getName()
        if name.startswith("stream execution thread"):
            if thread.isAlive():
                stream_threads.append(thread)
        elif (
            count_calls
            and name.startswith("Thread-")
            and _runs_a_python_call(traces.get(thread))
            and not thread.equals(this_thread)
        ):
            calls_in_flight += 1
    return stream_threads, calls_in_flight


def _runs_a_python_call(frames: Any) -> bool:
    depth = len(frames)
    if depth < 2 or not frames[depth - 2].getClassName().startswith(_PY4J_CONNECTION):
        return False
    bottom = (frames[i].getClassName() for i in range(max(0, depth - 8), depth - 2))
    return any(name.startswith(_PY4J_CALL) for name in bottom)


def _interrupt_without_reentry(session: SparkSession) -> None:
    """Ctrl-C raises KeyboardInterrupt at once; Spark's jobs are cancelled from another thread.

    PySpark's own SIGINT handler calls cancelAllJobs() inside the signal handler, on
    the py4j connection the interrupted call is still reading from: py4j then logs
    "reentrant call" tracebacks and the interrupt surfaces wrapped in them. Here the
    cancellation runs on a thread of its own (its own py4j connection) and the
    interrupted thread only gets the KeyboardInterrupt.
    """
    import signal

    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set on the main thread
    context = session.sparkContext

    def cancel_quietly() -> None:
        with contextlib.suppress(Exception):
            _move_jvm_console_to_log_file(context._jvm)
        with contextlib.suppress(Exception):
            context.cancelAllJobs()

    def on_interrupt(signum: int, frame: object) -> None:
        global _cancelling
        _Py4JInterruptNoise.interrupted = True
        _cancelling = threading.Thread(target=cancel_quietly, name="kafkatest-cancel", daemon=True)
        _cancelling.start()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_interrupt)
    redeliver_interrupts_lost_in_finalizers()
    # A filter on a logger sees only what is logged on that logger, not what its
    # children propagate: so on each logger py4j writes these records to.
    for name in ("", "py4j", "py4j.java_gateway", "py4j.clientserver"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _Py4JInterruptNoise) for f in logger.filters):
            logger.addFilter(_Py4JInterruptNoise())


#: The JVM's System.err while `_move_jvm_console_to_log_file` has replaced it.
_console_err: Any = None


def _move_jvm_console_to_log_file(jvm: Any) -> None:
    """After Ctrl-C, what the JVM prints goes to Spark's log file, not the console.

    Ctrl-C cancels every job and Spark stops under threads that are mid-way:
    some die with a stack trace (an uncaught exception printed by the JVM, an error
    logged by a query that fails to end) after "kafkatest: interrupted". Those are
    the interrupt's own consequences; the console keeps its one line, and the file
    keeps the traces in case the stop itself went wrong. `_after_interrupt_settled`
    gives the console back.
    """
    global _console_err
    log_file = spark_log_file()
    if log_file is None or _console_err is not None:  # not kafkatest's logging, or done
        return
    log4j = jvm.org.apache.logging.log4j.LogManager.getContext(False)
    log4j.getConfiguration().getRootLogger().removeAppender(CONSOLE_APPENDER)
    log4j.updateLoggers()
    _console_err = jvm.java.lang.System.err
    to_file = jvm.java.io.FileOutputStream(str(log_file), True)
    jvm.java.lang.System.setErr(jvm.java.io.PrintStream(to_file, True))


def _after_interrupt_settled(jvm: Any) -> None:
    """The interrupt's consequences are over (Spark stopped, or asked for again): undo it.

    The JVM outlives a stopped session, and a REPL or a script may go on after
    Ctrl-C: they get the console back, and stops no longer wait for other threads'
    calls.
    """
    global _cancelling, _console_err
    _cancelling = None
    if _console_err is None or jvm is None:
        return
    with contextlib.suppress(Exception):  # the JVM is gone: nothing to give back
        jvm.java.lang.System.setErr(_console_err)
        log4j = jvm.org.apache.logging.log4j.LogManager.getContext(False)
        configuration = log4j.getConfiguration()
        level = jvm.org.apache.logging.log4j.Level.toLevel(console_level())
        configuration.getRootLogger().addAppender(
            configuration.getAppender(CONSOLE_APPENDER), level, None
        )
        log4j.updateLoggers()
    _console_err = None


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
