"""The end of a Spark session in a test run: its queries stopped cleanly, and Ctrl-C.

Stopping Spark under threads that are mid-way makes the JVM print stack traces, and
PySpark's own Ctrl-C handling talks to the JVM from inside the signal handler. Here a
stop waits (bounded) for queries starting or ending and for calls still in flight,
and an interrupt cancels Spark's jobs from a thread of its own, moves the JVM's
console to Spark's log file until it has settled, and is not lost in a finalizer.
`kafkatest.spark.session` starts and stops the session with these.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from typing import TYPE_CHECKING, Any

from kafkatest.spark.logs import CONSOLE_APPENDER, console_level, spark_log_file

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: The thread Ctrl-C started to cancel Spark's jobs (see `interrupt_without_reentry`).
_cancelling: threading.Thread | None = None

#: How long stopping waits for queries that are still starting or already ending.
QUERY_END_WAIT_S = 10

#: py4j serves each Python thread's connection on a JVM thread of its own, whose
#: stack starts (just above Thread.run) in the connection's loop and, while it runs
#: one of Python's calls, passes through CallCommand.
_PY4J_CONNECTION = "py4j.ClientServerConnection"
_PY4J_CALL = "py4j.commands.CallCommand"


def stop_queries(session: SparkSession) -> None:
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


def interrupt_without_reentry(session: SparkSession) -> None:
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
    keeps the traces in case the stop itself went wrong. `after_interrupt_settled`
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


def after_interrupt_settled(jvm: Any) -> None:
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
