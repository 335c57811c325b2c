"""assert_state_bounded: a dedup with a watermark passes and the same dedup without one
fails, on both backends, on classic Spark and over Spark Connect; a stream-stream join
without a watermark on one side fails too; a stateless job is not applicable."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from corpus import shapes_joins_sinks as joins
from pyspark.sql import SparkSession
from state_jobs import (
    click_batch,
    copied_clicks,
    order_batch,
    unique_clicks,
    unique_clicks_forever,
)

from kafkatest import Broker
from kafkatest.oracles import StateAssertionError, assert_state_bounded
from kafkatest.state import reader_refusal


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


def dedup_verdicts(spark: SparkSession, broker: Broker) -> None:
    from kafkatest.spark.connect import api_of

    with api_of(spark):
        held = assert_state_bounded(unique_clicks, click_batch, spark=spark, broker=broker)
        (op,) = held.operators
        assert op.name == "dedupeWithinWatermark" and op.node.startswith("StreamingDeduplicate")
        assert max(op.rows[held.warmup :]) <= max(op.rows[: held.warmup]) < 40
        assert sum(op.removed) > 0  # the watermark evicted ids

        with pytest.raises(StateAssertionError) as failed:
            assert_state_bounded(unique_clicks_forever, click_batch, spark=spark, broker=broker)
    report = failed.value.report
    (op,) = report.operators
    assert op.rows == [5, 10, 15, 20, 25, 30, 35, 40] and not any(op.removed)
    assert (op.name, op.node, op.op_id) == ("dedupe", "StreamingDeduplicate", 0)
    message = str(failed.value)
    assert "operator 0 dedupe (StreamingDeduplicate, opId 0)" in message
    assert "carries no watermarked column" in message
    if reader_refusal(spark):
        assert "rows never evicted not read" in message
    else:  # the keys batches 0-3 brought are all still held after batch 7
        assert (op.kept_count, op.kept_of) == (20, 20)
        assert op.kept[0]["key"] == {"event_id": "c0-0"}
        assert '{"key": {"event_id": "c0-0"}' in message


def test_a_dedup_is_bounded_with_a_watermark_and_not_without(
    spark: SparkSession, kafka_broker: Broker
) -> None:
    dedup_verdicts(spark, kafka_broker)


@pytest.mark.kafka_backends("emulator")
def test_the_same_over_spark_connect(connect_spark: SparkSession, kafka_broker: Broker) -> None:
    dedup_verdicts(connect_spark, kafka_broker)


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
    report = assert_state_bounded(copied_clicks, click_batch, spark=spark, broker=kafka_broker)
    assert report.ok and report.not_applicable and not report.operators
    assert len(report.legs) == 1  # one batch shows there is no state to watch
    assert "not applicable: the query keeps no state" in report.message()
