"""read_state and state_metadata: what a dedup holds after a run, and none of it once
the watermark evicted it; a join's two sides; the change feed; clear refusals (a line
without the reader, an operator, batch or checkpoint that is not there)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from corpus import shapes_joins_sinks as joins
from pyspark.sql import SparkSession
from state_jobs import order_batch
from test_state_example import clicks, deduplicated_clicks

from kafkatest import Broker
from kafkatest.spark import wait_for_query
from kafkatest.state import (
    StateReadError,
    StateReaderUnavailable,
    read_state,
    reader_refusal,
    rocksdb_state_store,
    state_metadata,
)


def run_batch(job: Any, spark: SparkSession, broker: Broker, topic: str, records: list, ck: Path):
    """Seed `records`, then run `job` on checkpoint `ck` until it has read them."""
    from kafkatest.seeding import seed

    seed(broker, topic, records, duplicates="allow")
    sink = f"{topic}-out"
    if not broker.topic_exists(sink):
        broker.create_topic(sink)
    query = job(spark, broker.bootstrap_servers, topic, sink, str(ck), options={})
    wait_for_query(query)


def ids(rows: list[dict[str, Any]]) -> set[str]:
    return {row["key"]["event_id"] for row in rows}


# --8<-- [start:evicted]
def test_a_dedup_holds_its_keys_until_the_watermark_evicts_them(
    spark: SparkSession, kafka_broker: Broker, kafka_topic: Any, checkpoint_dir: Path
) -> None:
    if reader_refusal(spark):
        pytest.skip("the state data source is Spark 4.0+ (the refusal is tested below)")
    topic = kafka_topic(partitions=1)
    run_batch(
        deduplicated_clicks(watermark=True), spark, kafka_broker, topic, clicks(0), checkpoint_dir
    )
    held = read_state(spark, checkpoint_dir, operator_id=0)
    assert ids(held) == {f"c0-{n}" for n in range(5)}  # read after the query stopped
    assert {row["partition_id"] for row in held} <= {0, 1}
    assert all(row["value"]["expiresAtMicros"] > 0 for row in held)

    # Ten minutes of event time later: the 1-minute watermark passed every c0 click.
    run_batch(
        deduplicated_clicks(watermark=True), spark, kafka_broker, topic, clicks(5), checkpoint_dir
    )
    assert ids(read_state(spark, checkpoint_dir)) == {f"c5-{n}" for n in range(5)}
    # An earlier batch's state is still there to read.
    assert ids(read_state(spark, checkpoint_dir, batch_id=0)) == {f"c0-{n}" for n in range(5)}

    (operator,) = state_metadata(spark, checkpoint_dir)
    assert operator["operatorName"] == "dedupeWithinWatermark"
    assert (operator["operatorId"], operator["minBatchId"]) == (0, 0)


# --8<-- [end:evicted]


@pytest.mark.kafka_backends("emulator")
def test_a_join_is_read_side_by_side(
    spark: SparkSession, kafka_broker: Broker, kafka_topic: Any, checkpoint_dir: Path
) -> None:
    if reader_refusal(spark):
        pytest.skip("the state data source is Spark 4.0+")
    topic = kafka_topic()
    run_batch(
        joins.paid_orders_unbounded, spark, kafka_broker, topic, order_batch(0), checkpoint_dir
    )
    rows = read_state(spark, checkpoint_dir)
    sides = {(row["side"], row["value"]["ts"].minute) for row in rows}
    assert sides == {
        ("left", 0),
        ("left", 1),
        ("left", 2),
        ("right", 2),
        ("right", 3),
        ("right", 4),
    }
    left = read_state(spark, checkpoint_dir, join_side="left")
    assert {row["key"]["field0"] for row in left} == {"o0-0", "o0-1", "o0-2"}
    assert all("side" not in row for row in left)


@pytest.mark.kafka_backends("emulator")
def test_the_change_feed_shows_what_the_watermark_evicted(
    spark: SparkSession, kafka_broker: Broker, kafka_topic: Any, checkpoint_dir: Path
) -> None:
    if reader_refusal(spark):
        pytest.skip("the state data source is Spark 4.0+")
    topic = kafka_topic(partitions=1)
    with rocksdb_state_store(spark):
        run_batch(
            deduplicated_clicks(watermark=True),
            spark,
            kafka_broker,
            topic,
            clicks(0),
            checkpoint_dir,
        )
        run_batch(
            deduplicated_clicks(watermark=True),
            spark,
            kafka_broker,
            topic,
            clicks(5),
            checkpoint_dir,
        )
    changes = read_state(spark, checkpoint_dir, changes_from=0)
    deleted = {row["key"]["event_id"] for row in changes if row["change_type"] == "delete"}
    assert deleted == {f"c0-{n}" for n in range(5)}
    assert {row["batch_id"] for row in changes} >= {0}


@pytest.mark.kafka_backends("emulator")
def test_what_cannot_be_read_is_refused_with_the_reason(
    spark: SparkSession,
    kafka_broker: Broker,
    kafka_topic: Any,
    checkpoint_dir: Path,
    tmp_path: Path,
) -> None:
    if reader_refusal(spark):
        with pytest.raises(StateReaderUnavailable, match=r"from 4\.0; this session runs Spark 3"):
            read_state(spark, checkpoint_dir)
        with pytest.raises(StateReaderUnavailable, match=r"numRowsTotal|stateOperators"):
            state_metadata(spark, checkpoint_dir)
        return
    with pytest.raises(StateReadError, match="no checkpoint at"):
        read_state(spark, tmp_path / "nowhere")
    with pytest.raises(StateReadError, match="holds no state"):
        read_state(spark, tmp_path)
    topic = kafka_topic(partitions=1)
    run_batch(
        deduplicated_clicks(watermark=True), spark, kafka_broker, topic, clicks(0), checkpoint_dir
    )
    with pytest.raises(StateReadError, match="has no stateful operator 3; it has 0"):
        read_state(spark, checkpoint_dir, operator_id=3)
    with pytest.raises(StateReadError, match=r"batch 7 .* was never committed"):
        read_state(spark, checkpoint_dir, batch_id=7)
    with pytest.raises(StateReadError, match="not a stream-stream join"):
        read_state(spark, checkpoint_dir, join_side="left")
    with pytest.raises(StateReadError, match=r"providerClass=.*RocksDBStateStoreProvider"):
        read_state(spark, checkpoint_dir, changes_from=0)
    with pytest.raises(StateReadError, match="state_var and timers are for a transformWithState"):
        read_state(spark, checkpoint_dir, state_var="count")
