"""Ctrl-C during a Spark query ends the pytest run as interrupted, not as a failed test.

A terminal's Ctrl-C sends SIGINT to the whole foreground process group (pytest, and
the Spark JVM it started), so the run under test gets its own session and the
signal goes to that group. The run must end with pytest's "interrupted" status (2)
and a KeyboardInterrupt, with no failed test and no py4j traceback, and leave no
process behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYTEST = (sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly")

WAIT_FOR_QUERY = """
from pathlib import Path
from kafkatest.spark import wait_for_query

def test_waits(spark, kafka_broker, kafka_topic, checkpoint_dir):
    source = kafka_topic()
    query = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
        .option("subscribe", source).load()
        .writeStream.format("noop").option("checkpointLocation", str(checkpoint_dir)).start()
    )
    Path("started").write_text("1")
    wait_for_query(query, 600)  # never ends by itself: only Ctrl-C ends it
"""

RUN_SCENARIO = """
import threading, time
from pathlib import Path
from kafkatest.scenarios import Scenario, run_scenario
from kafkatest.scenarios.spec import Expectations, SeedSpec

def test_scenario(spark, kafka_broker, checkpoint_dir):
    scenario = Scenario(
        name="interrupted", job="kafkatest.scenarios.jobs:copy_stream",
        topics={"src": 1, "sink": 1}, source="src", sink="sink", seed=[SeedSpec("a", "src", 3)],
        # Offsets never reached: the run goes on until Ctrl-C.
        expect=Expectations(outcome="continues", until={"src": {0: 10**6}}), timeout_s=600,
    )

    def mark_when_running():
        while not spark.streams.active:
            time.sleep(0.2)
        Path("started").write_text("1")

    threading.Thread(target=mark_when_running, daemon=True).start()
    assert run_scenario(scenario, kafka_broker, spark, checkpoint_dir).ok
"""


def _interrupt_run(tmp_path: Path, test_source: str) -> tuple[int, str]:
    (tmp_path / "test_under_ctrl_c.py").write_text(test_source)
    process = subprocess.Popen(
        # Spark in the run's own process, even if a warm spark-server is up here.
        [*PYTEST, "test_under_ctrl_c.py", "--kafka-backend=emulator", "--spark-remote=off", "-q"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        deadline = time.monotonic() + 300
        while not (tmp_path / "started").exists():
            assert process.poll() is None, process.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "the query never started"
            time.sleep(0.2)
        time.sleep(1)  # let the test settle into waiting on the query
        os.killpg(process.pid, signal.SIGINT)
        output, _ = process.communicate(timeout=180)
        # The Spark JVM ends once its Python parent has gone; wait for that, bounded.
        deadline = time.monotonic() + 60
        while _left_behind(process.pid) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _left_behind(process.pid) == [], "the interrupted run left processes behind"
        return process.returncode, output
    finally:
        _reap(process)


def _reap(process: subprocess.Popen[str]) -> None:
    """Kill whatever the run left in its session (asserted empty by the tests)."""
    if process.poll() is None:
        process.kill()
        process.wait()
    if _left_behind(process.pid):
        os.killpg(process.pid, signal.SIGKILL)


def _left_behind(session: int) -> list[str]:
    found = subprocess.run(["pgrep", "-s", str(session)], capture_output=True, text=True)
    return found.stdout.split()


@pytest.mark.parametrize(
    "test_source", [WAIT_FOR_QUERY, RUN_SCENARIO], ids=["wait_for_query", "run_scenario"]
)
def test_ctrl_c_during_a_query_ends_the_run_as_interrupted(
    tmp_path: Path, test_source: str
) -> None:
    status, output = _interrupt_run(tmp_path, test_source)

    assert status == pytest.ExitCode.INTERRUPTED, output[-3000:]
    assert "KeyboardInterrupt" in output
    assert "py4j" not in output.lower(), output[-3000:]
    assert " failed" not in output and "FAILED" not in output and "error" not in output.lower()


def test_ctrl_c_during_the_demo_s_query_ends_it_as_interrupted(tmp_path: Path) -> None:
    """`kafkatest demo` outside pytest: the shell's usual 130, one line, no traceback."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kafkatest.cli",
            "demo",
            "--backend",
            "emulator",
            "--records",
            "200000",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if "starting Spark with the Kafka connector" in line:
                break  # printed when Spark is up: the query starts now
        time.sleep(3)  # into the query (200,000 records take longer than this)
        os.killpg(process.pid, signal.SIGINT)
        output, errors = process.communicate(timeout=180)
    finally:
        _reap(process)

    assert process.returncode == 130, output[-2000:] + errors[-3000:]
    assert "kafkatest: interrupted" in errors
    assert "Traceback" not in errors and "py4j" not in errors.lower(), _first_trace(errors)
    assert "result:" not in output  # it did not go on to judge a half-run query


def _first_trace(errors: str) -> str:
    """Where the first trace starts, and what follows: the tail may only show its end."""
    found = [i for i in (errors.find("Traceback"), errors.lower().find("py4j")) if i >= 0]
    start = max(0, min(found) - 1500) if found else 0
    return errors[start : start + 4000]
