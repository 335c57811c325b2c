"""Spark's log: errors on the console, everything to a file a failing run can name.

Spark's start-up prints a screen of warnings (the log4j profile, the loopback host
name, native Hadoop, spark.local.dir) that a newcomer takes for problems. kafkatest
gives the driver JVM its own log4j2 configuration instead: the console shows
`console_level()` and up (ERROR unless ``KAFKATEST_LOG_LEVEL`` or pytest's
``--kafka-log-level`` says otherwise), and a file keeps INFO and up for when a test
fails. The file outlives the session on purpose, in the system temp dir.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kafkatest.config import environment

LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF")
DEFAULT_CONSOLE_LEVEL = "ERROR"

_log_file: Path | None = None


def console_level() -> str:
    """The console's level: KAFKATEST_LOG_LEVEL, else ERROR; a bad name is refused."""
    level = environment("KAFKATEST_LOG_LEVEL", DEFAULT_CONSOLE_LEVEL).upper()
    if level == "WARNING":
        level = "WARN"
    if level not in LEVELS:
        raise ValueError(
            f"KAFKATEST_LOG_LEVEL={level!r} is not a log level: use one of {', '.join(LEVELS)}"
        )
    return level


def spark_log_file() -> Path | None:
    """The file this process's Spark driver logs to (None before Spark started)."""
    return _log_file


def log4j2_options(scratch: Path) -> str:
    """Java options that point the driver's log4j2 at kafkatest's configuration."""
    global _log_file
    logs = Path(tempfile.gettempdir()) / "kafkatest-logs"
    logs.mkdir(parents=True, exist_ok=True)
    _log_file = logs / f"spark-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    config = scratch / "log4j2.properties"
    config.write_text(_configuration(_log_file, console_level()))
    return f"-Dlog4j2.configurationFile=file:{config}"


#: Logged at ERROR, with an InterruptedException, when Ctrl-C reaches the JVM too and its
#: shutdown hook stops the SparkContext while Python is stopping it: noise after an
#: interrupt the user asked for. Kept in the file, not shown on the console.
_STOP_RACE = r"Could not tell tracker we are stopping\\..*"


#: The console appender's name, for `kafkatest.spark.session` to detach it after Ctrl-C.
CONSOLE_APPENDER = "console"


def _configuration(log_file: Path, console: str) -> str:
    # The console's level is on the root logger's reference to it: a Console appender
    # takes one filter, and a second (a ThresholdFilter beside the RegexFilter) is
    # dropped with "Console has no parameter that matches element ThresholdFilter".
    return f"""\
status = error
rootLogger.level = info
rootLogger.appenderRef.console.ref = {CONSOLE_APPENDER}
rootLogger.appenderRef.console.level = {console.lower()}
rootLogger.appenderRef.file.ref = file
appender.console.type = Console
appender.console.name = {CONSOLE_APPENDER}
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.alwaysWriteExceptions = false
appender.console.layout.pattern = %d{{HH:mm:ss}} %p %c{{1}}: %m%n{_first_cause(log_file)}
appender.console.filter.stopping.type = RegexFilter
appender.console.filter.stopping.regex = {_STOP_RACE}
appender.console.filter.stopping.onMatch = DENY
appender.console.filter.stopping.onMismatch = NEUTRAL
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log_file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{yy/MM/dd HH:mm:ss.SSS}} %p %t %c: %m%n%ex
logger.repl.name = {_REPL_LOGGER}
logger.repl.level = info
"""


#: The logger of the class that starts PySpark's JVM, which Spark treats as a shell's:
#: unless it has a level of its own equal to the root's, Spark prints "Setting default
#: log level to WARN" (and how to change it) on every start, and filters the console to
#: WARN. Given the root's level, the start is silent and the console keeps
#: `console_level()`.
_REPL_LOGGER = "org.apache.spark.api.python.PythonGatewayServer"


def _first_cause(log_file: Path) -> str:
    """The console's line for a logged exception: its first cause, and where the rest is.

    An expected failure (a data-loss test's query) logs a hundred lines of JVM stack
    trace that pytest shows under ``-rA`` for a passing test; the root cause's first
    line says what happened, the file keeps the trace. The pattern holds on log4j 2.20
    (Spark 3.5) to 2.25 (Spark 4.2): `%notEmpty` drops the line when nothing was
    thrown, `%rEx{1}` is the root cause's first line (2.25 prints a multi-line message
    whole, hence the `%replace`), and ``alwaysWriteExceptions = false`` keeps log4j
    from appending the full trace after it (2.24 does, the converter being nested).
    """
    return (
        r"%notEmpty{  caused by %replace{%rEx{1}}{(?s)\\R.*}{}"
        f" (full trace in {log_file})%n}}"
    )


#: The loggers that report a streaming query's end with an error ("Query ... terminated
#: with error"): the query's class by its name before and after Spark 4.1 moved it.
QUERY_LOGGERS = (
    "org.apache.spark.sql.execution.streaming.MicroBatchExecution",
    "org.apache.spark.sql.execution.streaming.runtime.MicroBatchExecution",
    "org.apache.spark.sql.execution.streaming.StreamExecution",
    "org.apache.spark.sql.execution.streaming.runtime.StreamExecution",
)
_quiet_lock = threading.Lock()
_quiet_depth = 0


@contextlib.contextmanager
def query_failures_to_file_only(jvm: Any) -> Iterator[None]:
    """While inside, a query's end with an error is logged to Spark's log file only.

    For failures the harness causes on purpose (an oracle stops a query by taking the
    log entry it is about to write): the user did not cause them, so they must not
    reach the terminal, and the file keeps them for whoever looks. Nested and
    concurrent uses share one change to the configuration. A session whose logging is
    not kafkatest's (no log file), or no JVM at hand (a remote Connect server, whose
    log is its own), is left alone.
    """
    global _quiet_depth
    if jvm is None or spark_log_file() is None:
        yield
        return
    with _quiet_lock:
        if _quiet_depth == 0:
            route_to_file(jvm, QUERY_LOGGERS)
        _quiet_depth += 1
    try:
        yield
    finally:
        with _quiet_lock:
            _quiet_depth -= 1
            if _quiet_depth == 0:
                with contextlib.suppress(Exception):  # the JVM stopped meanwhile
                    route_to_file(jvm, QUERY_LOGGERS, undo=True)


def route_to_file(jvm: Any, names: tuple[str, ...], *, undo: bool = False) -> None:
    """Send what the loggers `names` log to Spark's log file only (or, `undo`, back to
    the root's appenders)."""
    log4j = jvm.org.apache.logging.log4j
    context = log4j.LogManager.getContext(False)
    configuration = context.getConfiguration()
    for name in names:
        if undo:
            configuration.removeLogger(name)
            continue
        logger = jvm.org.apache.logging.log4j.core.config.LoggerConfig(
            name, log4j.Level.INFO, False
        )
        logger.addAppender(configuration.getAppender("file"), None, None)
        configuration.addLogger(name, logger)
    context.updateLoggers()


#: Failures a test asserted it expected (`assert_query_failed`), counted, so the pytest
#: plugin can keep Spark's console lines about them off a passing test's output.
_expected_failures = 0
#: Spark's console lines (this module's pattern) at ERROR, and the first-cause line
#: each may carry below it.
_CONSOLE_ERROR = re.compile(r"^\d\d:\d\d:\d\d ERROR \S+: ")
_CAUSE = re.compile(r"^  caused by ")


def note_expected_failure() -> None:
    """A test asserted that a query failed: Spark's ERROR lines about it were expected."""
    global _expected_failures
    _expected_failures += 1


def expected_failures() -> int:
    return _expected_failures


def without_spark_errors(text: str) -> str:
    """`text` less Spark's console ERROR lines and their first-cause lines."""
    kept, dropping = [], False
    for line in text.splitlines(keepends=True):
        if _CONSOLE_ERROR.match(line):
            dropping = True
            continue
        if dropping and _CAUSE.match(line):
            continue
        dropping = False
        kept.append(line)
    return "".join(kept)
