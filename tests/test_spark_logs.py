"""A run prints Spark's errors only; the full log goes to a file a failing test names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafkatest.spark import logs

pytestmark = pytest.mark.spark


def test_spark_start_up_is_quiet_and_a_failure_names_the_full_log(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_job="""
        def test_counts(spark):
            assert spark.range(3).count() == 3

        def test_fails(spark):
            # Shown with the failure: the console's errors, less the stop race.
            log = spark._jvm.org.apache.logging.log4j.LogManager.getLogger(
                "org.apache.spark.MapOutputTrackerMaster"
            )
            log.error("Could not tell tracker we are stopping.")
            jvm = spark._jvm
            cause = jvm.java.lang.IllegalStateException("the first cause\\nits second line")
            log.error("a genuine tracker error", jvm.java.lang.RuntimeException("outer", cause))
            log.warn("a tracker warning the console leaves out")
            assert spark.range(3).count() == 4
        """
    )
    result = pytester.runpytest_subprocess(
        "--kafka-backend=emulator", "-p", "no:cacheprovider", "-rA"
    )
    result.assert_outcomes(passed=1, failed=1)
    output = result.stdout.str() + result.stderr.str()
    # Errors reach the console, except the stop race a Ctrl-C causes (kept in the file).
    assert "ERROR MapOutputTrackerMaster: a genuine tracker error" in output
    assert "MapOutputTrackerMaster: Could not tell" not in output
    assert "WARN MapOutputTrackerMaster: a tracker warning" not in output  # below ERROR
    # A logged exception shows as its first cause's first line; its trace is in the file.
    assert "caused by java.lang.IllegalStateException: the first cause (full trace in " in output
    console = output.split("Captured stderr call", 1)[1].split("kafkatest spark log", 1)[0]
    assert "its second line" not in console and "\tat " not in output
    # Under -rA (the passing test's captured start-up too): no shell banner from Spark.
    assert "Setting default log level" not in output
    # Spark's start-up warnings stay in the file, not on the console.
    for noise in ("Using Spark's default log4j profile", "WARN NativeCodeLoader", "WARN Utils"):
        assert noise not in output
    named = re.search(r"Spark's full log: (\S+)", output)
    assert named, output[-3000:]
    text = Path(named.group(1)).read_text()
    assert " INFO " in text and "SparkContext" in text  # everything the console left out
    assert "MapOutputTrackerMaster: Could not tell tracker we are stopping" in text
    assert "WARN" in text and "a tracker warning the console leaves out" in text
    assert "Caused by: java.lang.IllegalStateException: the first cause" in text
    assert "\tat " in text and "its second line" in text


def test_a_bad_log_level_is_a_usage_error(pytester: pytest.Pytester):
    pytester.makepyfile(test_nothing="def test_nothing(): pass")
    result = pytester.runpytest_inprocess("--kafka-log-level=LOUD")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--kafka-log-level='LOUD' is not a log level*"])


def test_the_console_level_follows_the_environment(monkeypatch):
    monkeypatch.setenv("KAFKATEST_LOG_LEVEL", "warning")
    assert logs.console_level() == "WARN"
    monkeypatch.delenv("KAFKATEST_LOG_LEVEL")
    assert logs.console_level() == "ERROR"
