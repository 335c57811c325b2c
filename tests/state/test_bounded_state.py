"""assert_state_bounded beyond the docs example (test_state_example.py, classic Spark
on both backends): the same dedup over Spark Connect, with what the report names; a
stream-stream join without a watermark on one side; a stateless job."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from corpus import shapes_joins_sinks as joins
from pyspark.sql import SparkSession
from state_jobs import copied_clicks, order_batch
from test_state_example import clicks, deduplicated_clicks

from kafkatest import Broker
from kafkatest.oracles import StateAssertionError, assert_state_bounded


@pytest.fixture(scope="module")
def connect_spark(spark_session: SparkSession) -> Iterator[SparkSession]:
    """A Spark Connect session on the run's own Spark (no second JVM)."""
    import pyspark

    from kafkatest.spark.connect import connect_session_beside, stop_connect_beside

    if int(pyspark.__version__.split(".")[0]) < 4:
        pytest.skip(
            "PySpark 3.5's pip package has no Spark Connect server in a classic session's "
            "JVM to serve a session beside it (its Connect runs on a server of its own)"
        )
    session = connect_session_beside(spark_session)
    yield session
    stop_connect_beside(session)


@pytest.mark.kafka_backends("emulator")
def test_the_same_over_spark_connect(connect_spark: SparkSession, kafka_broker: Broker) -> None:
    from kafkatest.spark.connect import api_of

    spark, broker = connect_spark, kafka_broker
    with api_of(spark):  # the jobs' columns for a Connect session
        held = assert_state_bounded(
            deduplicated_clicks(watermark=True), clicks, spark=spark, broker=broker
        )
        with pytest.raises(StateAssertionError) as failed:
            assert_state_bounded(
                deduplicated_clicks(watermark=False), clicks, spark=spark, broker=broker
            )
    (op,) = held.operators
    assert op.node == "StreamingDeduplicateWithinWatermark" and sum(op.removed) > 0
    assert max(op.rows[held.warmup :]) <= max(op.rows[: held.warmup])

    (op,) = failed.value.report.operators
    assert op.rows == [5, 10, 15, 20, 25, 30, 35, 40] and not any(op.removed)
    assert (op.name, op.node, op.op_id) == ("dedupe", "StreamingDeduplicate", 0)
    message = str(failed.value)
    assert "operator 0 dedupe (StreamingDeduplicate, opId 0)" in message
    assert "carries no watermarked column" in message
    # The keys batches 0-3 brought are all still held after batch 7, read over Connect.
    assert (op.kept_count, op.kept_of) == (20, 20)
    assert '{"key": {"event_id": "c0-0"}' in message


@pytest.mark.kafka_backends("emulator")
def test_a_join_without_a_watermark_on_one_side_grows(
    spark: SparkSession, kafka_broker: Broker
) -> None:
    with pytest.raises(StateAssertionError) as failed:
        assert_state_bounded(
            joins.paid_orders_unbounded, order_batch, spark=spark, broker=kafka_broker, batches=6
        )
    (op,) = failed.value.report.operators
    assert op.name == "symmetricHashJoin" and op.rows == [6, 12, 18, 24, 30, 36]
    assert "neither side of the join has a state cleanup condition" in str(failed.value)


@pytest.mark.kafka_backends("emulator")
def test_a_stateless_job_is_not_applicable(spark: SparkSession, kafka_broker: Broker) -> None:
    report = assert_state_bounded(copied_clicks, clicks, spark=spark, broker=kafka_broker)
    assert report.ok and report.not_applicable and not report.operators
    assert len(report.legs) == 1  # one batch shows there is no state to watch
    assert "not applicable: the query keeps no state" in report.message()
