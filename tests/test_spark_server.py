"""Warm mode's own handling, on the default PySpark line: a server of another PySpark
is not used, one without the project's extras is refused with the fix, and a start
interrupted by Ctrl-C leaves nothing running. The round trip (start, pytest runs that
reuse the server, stop) runs on every line: tests/test_spark_server_lines.py."""

from __future__ import annotations

import importlib.util
import json
import os
import time
from pathlib import Path

import pytest

from kafkatest import Broker

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.skipif(
        importlib.util.find_spec("pyarrow") is None or importlib.util.find_spec("grpc") is None,
        reason="PySpark's connect extra is not installed (pip install 'kafkatest[connect]')",
    ),
]


@pytest.mark.kafka_backends("emulator")
def test_a_warm_server_of_another_pyspark_is_not_used(
    pytester: pytest.Pytester, kafka_broker: Broker, tmp_path: Path, monkeypatch
) -> None:
    """A Connect client speaks only to a server of its own version: the run says so and
    starts Spark itself (checked here without Spark: the run's spark_remote is '')."""
    state = tmp_path / "spark-server.json"
    port = int(kafka_broker.bootstrap_servers.rsplit(":", 1)[1])  # a port that answers
    state.write_text(
        json.dumps({"pid": os.getpid(), "port": port, "log": "x.log", "pyspark": "0.0.1"})
    )
    monkeypatch.setenv("KAFKATEST_SPARK_SERVER_STATE", str(state))
    pytester.makepyfile(
        test_remote="""
from kafkatest.pytest_plugin import spark_remote

def test_spark_starts_here(pytestconfig):
    assert spark_remote(pytestconfig) == ""
"""
    )
    result = pytester.runpytest_subprocess("--kafka-backend=emulator", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["kafkatest: a warm Spark Connect server runs PySpark 0.0.1, not this environment's*"]
    )


@pytest.mark.kafka_backends("emulator")
def test_a_warm_server_without_the_projects_extras_is_refused_with_the_fix(
    pytester: pytest.Pytester, kafka_broker: Broker, tmp_path: Path, monkeypatch
) -> None:
    """A project whose ini asks for spark-avro, and a warm server started without it:
    the spark fixture says which command fixes it (checked without Spark: the recorded
    server is this process, its port the broker's)."""
    import pyspark

    state = tmp_path / "spark-server.json"
    port = int(kafka_broker.bootstrap_servers.rsplit(":", 1)[1])  # a port that answers
    recorded = {"pid": os.getpid(), "port": port, "log": "x.log", "pyspark": pyspark.__version__}
    state.write_text(json.dumps(recorded))
    monkeypatch.setenv("KAFKATEST_SPARK_SERVER_STATE", str(state))
    monkeypatch.delenv("KAFKATEST_SPARK_EXTRAS", raising=False)
    pytester.makeini("[pytest]\nspark_extras = avro\n")
    pytester.makepyfile(test_avro="def test_avro(spark):\n    pass\n")
    result = pytester.runpytest_subprocess("--kafka-backend=emulator", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*SetupError: this project asks for the Spark extras *avro* (spark_extras)*stop*"]
    )


def _server_processes() -> set[int]:
    """Processes of a warm server: its Python process and its Spark JVM."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"kafkatest.spark.server" in command or b"kafkatest-spark-server" in command:
                found.add(int(entry.name))
    return found


def test_a_start_interrupted_by_ctrl_c_leaves_no_process(tmp_path: Path, monkeypatch) -> None:
    """The server runs in a session of its own (it outlives `start`): a start that is
    interrupted (Ctrl-C in `kafkatest spark-server start`) ends that whole session, the
    Spark JVM it had launched included, instead of leaving it to serve nobody."""
    import time

    from kafkatest.spark import server

    monkeypatch.setenv("KAFKATEST_SPARK_SERVER_STATE", str(tmp_path / "spark-server.json"))
    looks = iter(range(1_000))

    def interrupted_after_a_while() -> None:
        if next(looks) == 8:  # 4 s in: Spark's JVM is up, not serving yet
            raise KeyboardInterrupt
        return None

    monkeypatch.setattr(server, "running_server", interrupted_after_a_while)
    before = _server_processes()
    with pytest.raises(KeyboardInterrupt):
        server.start_server()
    time.sleep(1)
    assert _server_processes() - before == set()
    assert not (tmp_path / "spark-server.json").exists()


AUTO_DOWNSTREAM = """
from kafkatest.seeding import seed
from kafkatest.spark.connect import is_connect_session


def test_reads_kafka(spark, kafka_broker, kafka_topic):
    assert is_connect_session(spark)
    topic = kafka_topic()
    seed(kafka_broker, topic, [{"n": i} for i in range(3)])
    frame = spark.read.format("kafka").options(**kafka_broker.spark_options()).option(
        "subscribe", topic
    ).load()
    assert frame.count() == 3
"""


@pytest.mark.kafka_backends("emulator")
def test_spark_server_auto_starts_it_once_and_it_stops_when_unused(
    pytester: pytest.Pytester, kafka_broker: Broker, tmp_path: Path, monkeypatch
) -> None:
    """`spark_server = auto`: the first run starts the warm server, the next uses it, and
    once no run has used it for `spark_server_idle_minutes` it stops by itself."""
    import pyspark

    from kafkatest.jars.maven import cache_dir
    from kafkatest.spark.server import checks_tokens, stop_server

    if not checks_tokens(pyspark.__version__):
        pytest.skip("auto starts no server on PySpark 3.5 (no authentication there)")
    state = tmp_path / "spark-server.json"
    monkeypatch.setenv("KAFKATEST_SPARK_SERVER_STATE", str(state))
    monkeypatch.setenv("KAFKATEST_CACHE_DIR", str(cache_dir()))  # pytester moves HOME
    pytester.makeini("[pytest]\nspark_server = auto\nspark_server_idle_minutes = 0.5\n")
    pytester.makepyfile(test_auto=AUTO_DOWNSTREAM)
    args = (
        "--kafka-backend=external",
        f"--kafka-bootstrap={kafka_broker.bootstrap_servers}",
        "-p",
        "no:cacheprovider",
    )
    try:
        first = pytester.runpytest_subprocess(*args, timeout=300)
        first.assert_outcomes(passed=1)
        first.stdout.fnmatch_lines(["kafkatest: spark_server = auto: the first Spark test starts*"])
        recorded = json.loads(state.read_text())
        assert recorded["idle_minutes"] == 0.5 and recorded["token"]
        second = pytester.runpytest_subprocess(*args, timeout=300)
        second.assert_outcomes(passed=1)
        second.stdout.fnmatch_lines(["kafkatest: spark runs on the warm Spark Connect server*"])
        assert json.loads(state.read_text())["pid"] == recorded["pid"]
        # Unused for 30 s (looked at every 3 s): it stops, and forgets itself.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and state.exists():
            time.sleep(1)
        assert not state.exists()
        for _ in range(60):
            try:
                os.kill(recorded["pid"], 0)
            except ProcessLookupError:
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"the idle server (pid {recorded['pid']}) did not end")
    finally:
        stop_server()


def test_a_bad_spark_server_setting_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nspark_server = always\n")
    result = pytester.runpytest_subprocess("--kafka-backend=emulator", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*spark_server = 'always' (ini spark_server): give auto*"])
    pytester.makeini("[pytest]\nspark_server = auto\nspark_server_idle_minutes = never\n")
    result = pytester.runpytest_subprocess("--kafka-backend=emulator", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*spark_server_idle_minutes = 'never'*more than 0*"])
