"""No Spark ERROR line the user did not cause reaches the terminal: an oracle's own
stops, and a failure a passing test asserted with `assert_query_failed`, stay in
Spark's log file. A failure the test did not assert so is still shown (the control:
the run's output does carry Spark's console lines)."""

from __future__ import annotations

import pytest

from kafkatest import Broker

DOWNSTREAM = """
import pytest
from pyspark.sql import functions as F

from kafkatest.assertions import assert_query_failed
from kafkatest.oracles import assert_restart_invariant
from kafkatest.seeding import seed
from kafkatest.spark import wait_for_query


def copy_job(spark, bootstrap, source, sink, checkpoint, *, options):
    frame = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .options(**{k: v for k, v in options.items() if k != "trigger"})
        .load()
        .select("key", "value")
    )
    return (
        frame.writeStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", sink)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )


def failing_query(spark, broker, topic, words):
    seed(broker, topic, [{"n": 1}])
    return (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", broker.bootstrap_servers)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .select(F.assert_true(F.lit(False), words).alias("x"))
        .writeStream.format("noop")
        .trigger(availableNow=True)
        .start()
    )


def test_an_oracle_stops_its_runs(spark, kafka_broker):
    records = [{"key": f"k{n}", "value": {"n": n}} for n in range(9)]
    assert assert_restart_invariant(copy_job, records, spark=spark, broker=kafka_broker).ok


def test_an_expected_failure(spark, kafka_broker, kafka_topic):
    with pytest.raises(Exception) as failed:
        wait_for_query(failing_query(spark, kafka_broker, kafka_topic(), "expected boom"))
    assert_query_failed(failed.value, message="expected boom")


def test_a_failure_caught_but_not_asserted(spark, kafka_broker, kafka_topic):
    with pytest.raises(Exception, match="unasserted boom"):
        wait_for_query(failing_query(spark, kafka_broker, kafka_topic(), "unasserted boom"))
"""


@pytest.mark.kafka_backends("emulator")
def test_spark_errors_the_test_expected_stay_off_the_terminal(
    pytester: pytest.Pytester, kafka_broker: Broker
) -> None:
    pytester.makepyfile(test_quiet=DOWNSTREAM)
    result = pytester.runpytest_subprocess(
        "-rA",  # every passing test's captured output too
        "--spark-remote=off",
        "--kafka-backend=external",
        f"--kafka-bootstrap={kafka_broker.bootstrap_servers}",
        "-p",
        "no:cacheprovider",
        timeout=600,
    )
    result.assert_outcomes(passed=3)
    shown = result.stdout.str()
    assert "CONCURRENT_STREAM_LOG_UPDATE" not in shown
    assert "expected boom" not in shown
    assert "ERROR MicroBatchExecution" in shown and "unasserted boom" in shown  # the control
