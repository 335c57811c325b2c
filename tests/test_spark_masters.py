"""`--spark-master`: the spark fixture on `local-cluster[W,C,M]` runs executors in JVMs
of their own (as a cluster does), and the connector's jars and the broker's address
reach them: a downstream suite (the README's sinks example) passes (on the emulator)."""

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
    assert context.master == "local-cluster[2,1,1024]"
    # The driver and two executors, each its own process. Executors register with
    # the driver after the session starts (seconds later on a loaded machine).
    status = context._jsc.sc().getExecutorMemoryStatus
    deadline = time.monotonic() + 120
    while status().size() < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert status().size() == 3
"""


# The emulator only: what this checks is the Spark deployment reaching a broker on
# loopback; real Kafka meets Spark in-process in every [kafka] Spark test, and the
# advertised address in tests/test_plugin.py (a cold Spark of its own per backend
# cost CI minutes and proved nothing more).
@pytest.mark.kafka_backends("emulator")
def test_a_downstream_suite_runs_on_a_local_cluster(
    pytester: pytest.Pytester, kafka_broker: Broker
) -> None:
    result = _downstream_run(pytester, kafka_broker, DOWNSTREAM, "local-cluster[2,1,1024]")
    result.assert_outcomes(passed=2)


def _downstream_run(
    pytester: pytest.Pytester, broker: Broker, test: str, master: str
) -> pytest.RunResult:
    """The sinks example and `test` in a fresh pytest on `master`, against `broker`."""
    pytester.makepyfile(test_master=test, test_readme_sinks=SINKS_EXAMPLE.read_text())
    return pytester.runpytest_subprocess(
        f"--spark-master={master}",
        "--kafka-backend=external",
        f"--kafka-bootstrap={broker.bootstrap_servers}",
        "-p",
        "no:cacheprovider",
        timeout=600,
    )


STANDALONE = """
import time


def test_a_standalone_cluster_runs_the_executors(spark):
    context = spark.sparkContext
    assert context.master.startswith("spark://127.0.0.1:")
    status = context._jsc.sc().getExecutorMemoryStatus
    deadline = time.monotonic() + 120
    while status().size() < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert status().size() == 3, "the driver and one executor on each of two workers"
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
    result = _downstream_run(pytester, kafka_broker, STANDALONE, "standalone[2]")
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
