"""`--spark-master`: the spark fixture on `local-cluster[W,C,M]` runs executors in JVMs
of their own (as a cluster does), and the connector's jars and the broker's address
reach them: their tasks read Kafka (on the emulator); on `standalone[W]` kafkatest
starts the cluster, its executors read Kafka, and it stops."""

from __future__ import annotations

import pytest

from kafkatest import Broker

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

#: Executors' tasks read a topic through the connector: its jars were shipped to them
#: and the broker's address reaches them. {count} is the executors the master runs.
READS_KAFKA_ON_EXECUTORS = """
import time

from kafkatest.records import Record


def test_executors_read_kafka(spark, kafka_broker, kafka_topic):
    context = spark.sparkContext
    # The driver and the executors, each its own process. An executor registers with
    # the driver after the session starts (seconds later on a loaded machine).
    status = context._jsc.sc().getExecutorMemoryStatus
    deadline = time.monotonic() + 120
    while status().size() < 1 + {count} and time.monotonic() < deadline:
        time.sleep(0.2)
    assert status().size() == 1 + {count}
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

LOCAL_CLUSTER = """
def test_the_master_is_a_local_cluster(spark):
    assert spark.sparkContext.master == "local-cluster[1,1,1024]"
""" + READS_KAFKA_ON_EXECUTORS.format(count=1)


# The emulator only: what this checks is the Spark deployment reaching a broker on
# loopback; real Kafka meets Spark in-process in every [kafka] Spark test, and the
# advertised address in tests/test_plugin.py (a cold Spark of its own per backend
# cost CI minutes and proved nothing more).
@pytest.mark.kafka_backends("emulator")
def test_a_downstream_suite_runs_on_a_local_cluster(
    pytester: pytest.Pytester, kafka_broker: Broker
) -> None:
    result = _downstream_run(pytester, kafka_broker, LOCAL_CLUSTER, "local-cluster[1,1,1024]")
    result.assert_outcomes(passed=2)


def _downstream_run(
    pytester: pytest.Pytester, broker: Broker, test: str, master: str
) -> pytest.RunResult:
    """`test` in a fresh pytest on `master`, against `broker`."""
    pytester.makepyfile(test_master=test)
    return pytester.runpytest_subprocess(
        f"--spark-master={master}",
        "--kafka-backend=external",
        f"--kafka-bootstrap={broker.bootstrap_servers}",
        "-p",
        "no:cacheprovider",
        timeout=600,
    )


# One worker (kafkatest starts it, and would start more: `standalone[W]`).
STANDALONE = """
def test_the_master_is_kafkatest_s_standalone_cluster(spark):
    assert spark.sparkContext.master.startswith("spark://127.0.0.1:")
""" + READS_KAFKA_ON_EXECUTORS.format(count=1)


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
    result = _downstream_run(pytester, kafka_broker, STANDALONE, "standalone[1]")
    result.assert_outcomes(passed=2)
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
