"""`--spark-master`: the spark fixture on `local-cluster[W,C,M]` runs executors in JVMs
of their own (as a cluster does), and the connector's jars and the broker's address
reach them: a downstream suite (the README's sinks example) passes (on the emulator);
on `standalone[W]` kafkatest starts the cluster, its executors read Kafka, and it stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkatest import Broker

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SINKS_EXAMPLE = Path(__file__).parent / "test_readme_sinks_example.py"

DOWNSTREAM = """
import time


def test_executors_run_in_jvms_of_their_own(spark):
    context = spark.sparkContext
    assert context.master == "local-cluster[1,1,1024]"
    # The driver and the executor, each its own process. The executor registers with
    # the driver after the session starts (seconds later on a loaded machine).
    status = context._jsc.sc().getExecutorMemoryStatus
    deadline = time.monotonic() + 120
    while status().size() < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert status().size() == 2
"""


# The emulator only: what this checks is the Spark deployment reaching a broker on
# loopback; real Kafka meets Spark in-process in every [kafka] Spark test, and the
# advertised address in tests/test_plugin.py (a cold Spark of its own per backend
# cost CI minutes and proved nothing more).
@pytest.mark.kafka_backends("emulator")
def test_a_downstream_suite_runs_on_a_local_cluster(
    pytester: pytest.Pytester, kafka_broker: Broker
) -> None:
    result = _downstream_run(pytester, kafka_broker, DOWNSTREAM, "local-cluster[1,1,1024]")
    result.assert_outcomes(passed=2)


def _downstream_run(
    pytester: pytest.Pytester, broker: Broker, test: str, master: str, sinks: bool = True
) -> pytest.RunResult:
    """`test` (and the sinks example) in a fresh pytest on `master`, against `broker`."""
    example = {"test_readme_sinks": SINKS_EXAMPLE.read_text()} if sinks else {}
    pytester.makepyfile(test_master=test, **example)
    return pytester.runpytest_subprocess(
        f"--spark-master={master}",
        "--kafka-backend=external",
        f"--kafka-bootstrap={broker.bootstrap_servers}",
        "-p",
        "no:cacheprovider",
        timeout=600,
    )


# Two workers (kafkatest starts each); the executors read Kafka through the connector
# (the sinks example's streams run on local-cluster above: the same jars, shipped alike).
STANDALONE = """
import time

from kafkatest.records import Record


def test_a_standalone_cluster_runs_the_executors(spark, kafka_broker, kafka_topic):
    context = spark.sparkContext
    assert context.master.startswith("spark://127.0.0.1:")
    status = context._jsc.sc().getExecutorMemoryStatus
    deadline = time.monotonic() + 120
    while status().size() < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert status().size() == 3, "the driver and one executor on each of two workers"
    topic = kafka_topic(partitions=2)
    kafka_broker.produce([Record(topic=topic, key=str(n).encode(), value=b"v") for n in range(20)])
    rows = (
        spark.read.format("kafka")
        .options(**kafka_broker.spark_options())
        .option("subscribe", topic)
        .load()
        .repartition(4)
        .count()
    )
    assert rows == 20
"""


def _standalone_jvms() -> list[str]:
    import subprocess

    found = subprocess.run(
        ["pgrep", "-f", "kafkatest-spark-standalone-"], capture_output=True, text=True
    )
    return found.stdout.split()


@pytest.mark.kafka_backends("emulator")
def test_kafkatest_starts_and_stops_a_standalone_cluster(
    pytester: pytest.Pytester, kafka_broker: Broker
) -> None:
    result = _downstream_run(pytester, kafka_broker, STANDALONE, "standalone[2]", sinks=False)
    result.assert_outcomes(passed=1)
    assert _standalone_jvms() == [], "the master, workers and executors were stopped"


@pytest.mark.parametrize(
    "master", ["yarn", "local[two]", "standalone[0]", "standalone[9]", "spark://nohost"]
)
def test_a_master_kafkatest_cannot_run_is_one_usage_error(
    pytester: pytest.Pytester, master: str
) -> None:
    pytester.makepyfile(test_x="def test_x(): pass\n")
    result = pytester.runpytest_subprocess(f"--spark-master={master}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"--spark-master={master!r}: give local[N], local-cluster[W,C,M]" in (
        result.stderr.str()
    )
