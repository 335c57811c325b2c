"""pytest-xdist: per-worker emulators, one shared Kafka broker, reports in one place.

The downstream suite runs with ``-n 2 --dist each`` so that every test runs on both
workers: both must see the same Kafka bootstrap and JVM, their own emulators, and
leave one delivery report each under the one ``kafkatest-reports/``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from kafkatest.brokers.shared_kafka import RUN_PREFIX, alive

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.skipif(shutil.which("java") is None, reason="the kafka backend needs Java"),
]

DOWNSTREAM = """
import json, os, time

import pytest

from kafkatest.assertions import assert_exactly_once
from kafkatest.errors import UnsupportedOperation
from kafkatest.records import Record

SEEN = {seen!r}


def test_broker(kafka_broker, kafka_topic):
    topic = kafka_topic()
    kafka_broker.produce([Record(topic=topic, value=b"x")])
    line = {{
        "worker": os.environ["PYTEST_XDIST_WORKER"],
        "run": os.environ["PYTEST_XDIST_TESTRUNUID"],
        "pid": os.getpid(),
        "backend": kafka_broker.backend,
        "bootstrap": kafka_broker.bootstrap_servers,
        "jvm": getattr(kafka_broker, "jvm_pid", None),
        "watchdog": getattr(kafka_broker, "watchdog_pid", None),
        "topic": topic,
        "offsets": kafka_broker.latest_offsets(topic),
    }}
    with open(SEEN, "a") as out:
        out.write(json.dumps(line) + "\\n")
    if kafka_broker.backend == "kafka":
        # Both workers on the broker at once: a worker that has moved on releases its
        # lease, and the last one out stops the broker, so a worker lagging behind (a
        # loaded machine) would otherwise start a second one and the check of one
        # shared broker would test the timing instead.
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            with open(SEEN) as seen:
                lines = [json.loads(text) for text in seen if text.strip()]
            kafkas = {{x["worker"] for x in lines if x.get("backend") == "kafka"}}
            if len(kafkas) == 2:
                break
            time.sleep(0.2)


@pytest.mark.kafka_backends("kafka")
def test_faults_that_stop_the_shared_broker_are_refused(kafka_broker, kafka_faults):
    for fault in (kafka_faults.stop, kafka_faults.restart, kafka_faults.pause):
        with pytest.raises(UnsupportedOperation, match="shared by every pytest-xdist worker"):
            fault()


def test_delivery_report():
    assert_exactly_once([{{"id": 1}}], [{{"id": 1}}, {{"id": 1}}], on="id")


@pytest.mark.kafka_backends("emulator")
def test_spark(spark, kafka_broker, kafka_topic, checkpoint_dir):
    topic = kafka_topic()
    kafka_broker.produce([Record(topic=topic, value=b"a"), Record(topic=topic, value=b"b")])
    name = "copied_" + os.environ["PYTEST_XDIST_WORKER"]
    query = (
        spark.readStream.format("kafka")
        .options(**kafka_broker.spark_options())
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(checkpoint_dir))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(180)
    line = {{
        "worker": os.environ["PYTEST_XDIST_WORKER"],
        "spark": "session",
        "jvm": spark.sparkContext._jvm.ProcessHandle.current().pid(),
        "app": spark.sparkContext.applicationId,
        "checkpoint": str(checkpoint_dir),
        "rows": spark.sql(f"select count(*) from {{name}}").collect()[0][0],
        "committed": sorted(
            f for f in os.listdir(os.path.join(str(checkpoint_dir), "commits"))
            if not f.startswith(".")
        ),
    }}
    with open(SEEN, "a") as out:
        out.write(json.dumps(line) + "\\n")
"""


def test_two_workers_share_one_kafka_and_one_report_directory(pytester: pytest.Pytester) -> None:
    seen = pytester.path / "seen.jsonl"
    pytester.makepyfile(test_downstream=DOWNSTREAM.format(seen=str(seen)))
    result = pytester.runpytest_subprocess(
        "-n",
        "2",
        "--dist",
        "each",
        "--kafka-backend=emulator,kafka",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        timeout=900,
    )
    # Per worker: test_broker on each backend, the refusal and the Spark test pass, the
    # report fails.
    result.assert_outcomes(passed=8, failed=2)
    everything = [json.loads(line) for line in seen.read_text().splitlines()]
    sparks = [x for x in everything if x.get("spark")]
    lines = [x for x in everything if not x.get("spark")]
    # Each worker its own SparkSession (its own JVM) and checkpoint directory.
    assert sorted(x["worker"] for x in sparks) == ["gw0", "gw1"]
    # (Not the application ids: a local one is "local-" and the start's millisecond,
    # which two workers starting together can share; CI saw it.)
    assert len({x["jvm"] for x in sparks}) == 2
    assert len({x["checkpoint"] for x in sparks}) == 2
    assert [(x["rows"], x["committed"]) for x in sparks] == [(2, ["0"]), (2, ["0"])]
    assert sorted((x["worker"], x["backend"]) for x in lines) == [
        ("gw0", "emulator"),
        ("gw0", "kafka"),
        ("gw1", "emulator"),
        ("gw1", "kafka"),
    ]
    assert len({x["pid"] for x in lines}) == 2
    emulators = [x for x in lines if x["backend"] == "emulator"]
    kafkas = [x for x in lines if x["backend"] == "kafka"]
    # Each worker its own emulator; one Kafka (one address, one JVM) for both.
    assert len({x["bootstrap"] for x in emulators}) == 2
    assert len({x["bootstrap"] for x in kafkas}) == 1
    assert len({x["jvm"] for x in kafkas}) == 1
    assert len({x["topic"] for x in lines}) == 4
    # After the run: the JVM and its watchdog are gone, and so is the run directory.
    assert not alive(kafkas[0]["jvm"]) and not alive(kafkas[0]["watchdog"])
    run = lines[0]["run"]
    assert not list(Path(tempfile.gettempdir()).glob(f"{RUN_PREFIX}{run}*"))
    # One report per worker, side by side under the invocation directory's reports.
    reports = sorted(p.name for p in (pytester.path / "kafkatest-reports").iterdir())
    assert reports == [
        "test_downstream.py_test_delivery_report@gw0",
        "test_downstream.py_test_delivery_report@gw1",
    ]
    for report in reports:
        assert (pytester.path / "kafkatest-reports" / report / "delivery-report.json").exists()


HOLDER = """
import json, sys, time
from pathlib import Path
from kafkatest.brokers.shared_kafka import SharedKafkaBroker

broker = SharedKafkaBroker(Path(sys.argv[1]), int(sys.argv[2]))
broker.start()
print(json.dumps({"bootstrap": broker.bootstrap_servers, "jvm": broker.jvm_pid,
                  "watchdog": broker.watchdog_pid}), flush=True)
time.sleep(3600)
"""


def _hold(
    directory: Path, controller: int | None = None
) -> tuple[subprocess.Popen[str], dict[str, object]]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(directory), str(controller or os.getpid())],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    line = holder.stdout.readline()
    assert line, f"the lease holder exited with {holder.wait()}"
    return holder, json.loads(line)


def _wait_gone(pid: int, patience_s: float = 120.0) -> bool:
    deadline = time.monotonic() + patience_s
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    return not alive(pid)


def test_a_killed_worker_neither_takes_the_broker_nor_leaks_it(tmp_path: Path) -> None:
    from kafkatest.brokers.external import ExternalBroker
    from kafkatest.brokers.shared_kafka import run_directory

    directory = run_directory(f"killtest{os.getpid()}{time.time_ns()}", {})
    first, started = _hold(directory)  # starts the watchdog and Kafka
    second, attached = _hold(directory)
    try:
        assert attached == started
        first.send_signal(signal.SIGKILL)
        first.wait(30)
        # The worker that started Kafka is gone; the other still uses it.
        still = ExternalBroker(str(started["bootstrap"]))
        still.start()
        still.create_topic("after-the-kill")
        assert still.topic_exists("after-the-kill")
        still.close()
        assert alive(int(started["jvm"]))  # type: ignore[call-overload]
        second.send_signal(signal.SIGKILL)
        second.wait(30)
        # No live lease: the watchdog stops Kafka and removes the run directory.
        assert _wait_gone(int(started["watchdog"]))  # type: ignore[call-overload]
        assert not alive(int(started["jvm"]))  # type: ignore[call-overload]
        assert not directory.exists()
    finally:
        for holder in (first, second):
            if holder.poll() is None:
                holder.kill()
                holder.wait(30)


def test_the_broker_stops_when_the_xdist_controller_is_gone() -> None:
    """A worker still holding its lease (e.g. hung) does not keep Kafka past its run."""
    from kafkatest.brokers.shared_kafka import run_directory

    controller = subprocess.Popen(["sleep", "3600"])
    directory = run_directory(f"controllertest{os.getpid()}{time.time_ns()}", {})
    holder, started = _hold(directory, controller.pid)
    try:
        controller.kill()
        controller.wait(30)
        assert _wait_gone(int(started["watchdog"]))  # type: ignore[call-overload]
        assert not alive(int(started["jvm"]))  # type: ignore[call-overload]
        assert holder.poll() is None  # the lease holder lives on; the broker did not
        assert not directory.exists()
    finally:
        holder.kill()
        holder.wait(30)
        if controller.poll() is None:
            controller.kill()
