"""Warm mode: `kafkatest spark-server start`
keeps a Spark Connect server with the connector and the project's `spark_extras` up;
pytest runs find it, each in a session of its own, and reuse its JVM; `stop` ends it
and nothing is left running.

PySpark 3.5's pip package lacks Spark Connect's server, which kafkatest resolves from
Maven Central (tests/test_connect_server_jar.py): without that, `start` fails there
with ClassNotFoundException: SparkConnectPlugin. One server start (30-60 s): this
module runs on the default line; on 3.5, 4.0 and 4.3 warm mode runs in `nox -s
downstream-<line>` (a fresh install, a project asking for spark-avro, a suite on the
server), which CI runs instead of this module on those lines."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from kafkatest import Broker
from kafkatest.jars.maven import cache_dir
from kafkatest.spark.server import AUTH_TOKEN_VARIABLE, checks_tokens

#: The user's jar cache, read before pytester points HOME at a temp dir: the server
#: started here finds the connector, spark-avro (and on PySpark 3.5 Spark Connect's
#: server) there instead of resolving them again.
JAR_CACHE = str(cache_dir())

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.skipif(
        importlib.util.find_spec("pyarrow") is None or importlib.util.find_spec("grpc") is None,
        reason="PySpark's connect extra is not installed (pip install 'kafkatest[connect]')",
    ),
]

DOWNSTREAM = """
import json, os

from kafkatest.seeding import seed
from kafkatest.spark.connect import is_connect_session


def test_reads_kafka_through_the_warm_server(spark, kafka_broker, kafka_topic):
    assert is_connect_session(spark)
    topic = kafka_topic(partitions=2)
    seed(kafka_broker, topic, [{"n": i} for i in range(10)])
    frame = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
        .option("subscribe", topic)
        .load()
    )
    assert frame.count() == 10
    # The connector's cached clients close a minute after their run's broker is gone.
    assert spark.conf.get("spark.kafka.producer.cache.timeout") == "60s"
    assert spark.conf.get("spark.kafka.consumer.cache.timeout") == "60s"
    # Each run has a session of its own on the shared server: a view made here is
    # not seen by the next run.
    assert not [t for t in spark.catalog.listTables() if t.name == "from_an_earlier_run"]
    frame.createOrReplaceTempView("from_an_earlier_run")


def test_the_projects_spark_extras_are_loaded_in_the_server(spark):
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro, to_avro

    row = spark.range(1).select(from_avro(to_avro(F.col("id")), '"long"').alias("n")).first()
    assert row.n == 0
"""


def _cli(
    *args: str, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafkatest.cli", "spark-server", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


#: A Connect client that knows the port but not the key: exit 3 when the server refuses it.
WITHOUT_TOKEN = """
import sys
from pyspark.sql import SparkSession
try:
    SparkSession.builder.remote(f"sc://127.0.0.1:{sys.argv[1]}").getOrCreate().range(1).collect()
except Exception as refused:
    print(type(refused).__name__, refused)
    sys.exit(3 if "UNAUTHENTICATED" in str(refused) or "authenticat" in str(refused) else 4)
"""


def _query_without_the_token(port: int, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    plain = {k: v for k, v in env.items() if k != AUTH_TOKEN_VARIABLE}
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_TOKEN, str(port)],
        env=plain,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.kafka_backends("emulator")
def test_pytest_runs_reuse_the_warm_server_until_it_stops(
    pytester: pytest.Pytester, kafka_broker: Broker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "spark-server.json"
    env = {**os.environ, "KAFKATEST_SPARK_SERVER_STATE": str(state)}
    env.setdefault("KAFKATEST_CACHE_DIR", JAR_CACHE)
    assert _cli("status", env=env).returncode == 1
    # The project's ini asks for spark-avro: `start`, run in the project, loads it.
    pytester.makeini("[pytest]\nspark_extras = avro\n")
    env.pop("KAFKATEST_SPARK_EXTRAS", None)
    started = _cli("start", env=env, cwd=pytester.path)
    try:
        assert started.returncode == 0, started.stderr
        assert "with the Spark extras: avro" in started.stdout
        recorded = json.loads(state.read_text())
        pid = recorded["pid"]
        assert stat.S_IMODE(state.stat().st_mode) == 0o600  # it holds the token
        if checks_tokens(recorded["pyspark"]):
            # Spark 4.0+: a client without the server's key (another user) is refused.
            refused = _query_without_the_token(recorded["port"], env)
            assert refused.returncode == 3, refused.stdout + refused.stderr
            assert recorded["token"] not in _cli("status", env=env).stdout
        else:
            assert recorded["token"] == ""  # Spark Connect 3.5 has no authentication
        status = _cli("status", env=env).stdout
        assert f"pid {pid}" in status and "extras: avro" in status
        pytester.makepyfile(test_warm=DOWNSTREAM)
        monkeypatch.setenv("KAFKATEST_SPARK_SERVER_STATE", str(state))
        for _ in range(2):  # the second run finds the same server
            result = pytester.runpytest_subprocess(
                "--kafka-backend=external",
                f"--kafka-bootstrap={kafka_broker.bootstrap_servers}",
                "-p",
                "no:cacheprovider",
                timeout=300,
            )
            result.assert_outcomes(passed=2)
            assert json.loads(state.read_text())["pid"] == pid
            result.stdout.fnmatch_lines(
                ["kafkatest: spark runs on the warm Spark Connect server sc://*:[0-9]* (pid *)*"]
            )
            if recorded["token"]:
                assert recorded["token"] not in result.stdout.str()
        _forked_run_uses_the_warm_server(pytester.path, kafka_broker, pid)
    finally:
        stopped = _cli("stop", env=env)
    assert f"stopped the server (pid {pid})" in stopped.stdout
    assert not state.exists()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert _cli("status", env=env).returncode == 1


def _forked_run_uses_the_warm_server(project: Path, broker: Broker, server_pid: int) -> None:
    """`kafkatest pytest` (a child of its fork server, which imported this line's
    Connect client before forking) runs the same tests on the same warm server."""
    fork_cache = tempfile.mkdtemp(prefix="kt-")
    env = {**os.environ, "KAFKATEST_CACHE_DIR": fork_cache}
    command = [sys.executable, "-m", "kafkatest.cli"]
    try:
        for _ in range(2):  # the first starts the fork server, the second is its child
            done = subprocess.run(
                [
                    *command,
                    "pytest",
                    "--kafka-backend=external",
                    f"--kafka-bootstrap={broker.bootstrap_servers}",
                    "-p",
                    "no:cacheprovider",
                ],
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
            assert "2 passed" in done.stdout
            assert (
                "warm Spark Connect server sc://" in done.stdout
                and f"(pid {server_pid})" in done.stdout
            )
        status = subprocess.run(
            [*command, "pytest-server", "status"], env=env, capture_output=True, text=True
        )
        assert status.returncode == 0 and "running: pid" in status.stdout
    finally:
        subprocess.run([*command, "pytest-server", "stop"], env=env, capture_output=True)
        shutil.rmtree(fork_cache)
