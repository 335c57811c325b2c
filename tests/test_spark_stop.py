"""Stopping Spark after Ctrl-C: wait for what the interrupt left running, keep the console quiet."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkatest.spark import interrupts
from kafkatest.spark.interrupts import _unfinished_jvm_work, stop_queries

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def _call_left_running(jvm: Any) -> Iterator[Any]:
    """Another Python thread's call, running in the JVM until the latch it yields is released."""
    latch = jvm.java.util.concurrent.CountDownLatch(1)
    call = threading.Thread(target=getattr(latch, "await"))  # a Python keyword
    call.start()
    try:
        deadline = time.monotonic() + 10
        while _unfinished_jvm_work(jvm, True)[1] == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _unfinished_jvm_work(jvm, True)[1] == 1  # the other thread's, not this one's
        yield latch
    finally:
        latch.countDown()
        call.join()


def test_after_ctrl_c_stopping_waits_for_a_call_left_running_in_the_jvm(
    spark, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `start()` that Ctrl-C interrupted goes on in the JVM: the stop waits for it."""
    cancel_thread_done = threading.Thread(target=lambda: None)
    cancel_thread_done.start()
    monkeypatch.setattr(interrupts, "_cancelling", cancel_thread_done)  # as after Ctrl-C
    with _call_left_running(spark._jvm) as latch:
        threading.Timer(1.0, latch.countDown).start()
        stop_queries(spark)
        assert _unfinished_jvm_work(spark._jvm, True)[1] == 0  # it waited for the release


def test_without_ctrl_c_stopping_leaves_other_threads_calls_alone(spark) -> None:
    """A thread's own long call (a batch job) is not the stop's to wait for."""
    assert interrupts._cancelling is None
    with _call_left_running(spark._jvm):
        stop_queries(spark)
        assert _unfinished_jvm_work(spark._jvm, True)[1] == 1  # returned with it still running


def test_after_ctrl_c_the_jvm_prints_to_the_log_file_until_spark_is_stopped() -> None:
    script = """
import os, signal, threading, time
from kafkatest.spark import kafka_spark_session, stop_spark_session
from kafkatest.spark.logs import spark_log_file

spark = kafka_spark_session()
jvm = spark._jvm
jvm.org.apache.logging.log4j.LogManager.getLogger("x.Before").error("an error before Ctrl-C")
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)
except KeyboardInterrupt:
    pass
for thread in threading.enumerate():
    if thread.name == "kafkatest-cancel":
        thread.join()
jvm.org.apache.logging.log4j.LogManager.getLogger("x.After").error("an error after Ctrl-C")
jvm.java.lang.Thread.dumpStack()  # what the JVM prints of an uncaught exception, to System.err
print(spark_log_file())
stop_spark_session(spark)
# Going on after the interrupt: a new session's console is the console again.
spark = kafka_spark_session()
spark._jvm.org.apache.logging.log4j.LogManager.getLogger("x.Again").error("an error afterwards")
spark._jvm.java.lang.Thread.dumpStack()
stop_spark_session(spark)
"""
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "ERROR Before: an error before Ctrl-C" in result.stderr
    assert "an error after Ctrl-C" not in result.stderr
    assert result.stderr.count("java.lang.Exception: Stack trace") == 1  # the one afterwards
    assert "ERROR Again: an error afterwards" in result.stderr
    log_file = Path(result.stdout.strip().splitlines()[-1]).read_text()
    assert "an error after Ctrl-C" in log_file
    assert "java.lang.Exception: Stack trace" in log_file
