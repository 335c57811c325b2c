"""Spark's Kafka source over a compacted topic, on every backend.

What Spark 4 does on real Kafka 4.1 (and the emulator must match): a batch read
returns the latest record per key with the offsets they were written at, stepping
over the gaps the cleaner left. A streaming query that resumes at an offset the
cleaner removed is not losing data: Spark's consumer asks for the offset, gets the
next surviving record, sees that the offset is still at or above the partition's
earliest offset and skips on quietly, with failOnDataLoss true as with false.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafkatest.brokers.base import Broker
from kafkatest.emulator import COMPACT_NOW_KEY
from kafkatest.faults import Faults
from kafkatest.records import Record
from kafkatest.spark import wait_for_query

pytestmark = [
    pytest.mark.spark,
    pytest.mark.kafka_min_version(
        "4.0",
        "Kafka 3.9.1 never described the topic's compaction settings as applied (nox kafka39)",
    ),
]

MARKER = COMPACT_NOW_KEY.decode()
Row = tuple[int, str, str | None]


def _round(broker: Broker, topic: str, number: int) -> None:
    broker.produce(
        Record(topic=topic, key=k.encode(), value=f"{k}{number}".encode()) for k in "abc"
    )


def _rows(frame: Any) -> list[Row]:
    selected = frame.selectExpr("offset", "CAST(key AS STRING) k", "CAST(value AS STRING) v")
    return sorted((r.offset, r.k, r.v) for r in selected.collect())


def _stream(
    spark: Any, broker: Broker, topic: str, checkpoint: Path, fail_on_data_loss: bool
) -> list[Row]:
    """One AvailableNow run from `checkpoint`; the rows it read."""
    rows: list[Row] = []

    def collect(batch: Any, _batch_id: int) -> None:
        rows.extend((r.offset, r.k, r.v) for r in batch.collect())

    query = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", broker.bootstrap_servers)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("failOnDataLoss", str(fail_on_data_loss).lower())
        .load()
        .selectExpr("offset", "CAST(key AS STRING) k", "CAST(value AS STRING) v")
        .writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    wait_for_query(query, timeout_s=180)
    return sorted(rows)


def test_batch_read_of_a_compacted_topic_sees_the_latest_value_per_key(
    spark: Any, kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic(config={"cleanup.policy": "compact"})
    for number in range(3):
        _round(kafka_broker, topic, number)
    kafka_faults.compact_now(topic)

    frame = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
        .load()
    )

    assert _rows(frame) == [(6, "a", "a2"), (7, "b", "b2"), (8, "c", "c2"), (9, MARKER, None)]


@pytest.mark.parametrize("fail_on_data_loss", [True, False], ids=["failOnDataLoss", "lenient"])
def test_a_query_resumes_across_offsets_the_cleaner_removed(
    spark: Any,
    kafka_broker: Broker,
    kafka_topic: Callable[..., str],
    kafka_faults: Faults,
    checkpoint_dir: Path,
    fail_on_data_loss: bool,
) -> None:
    topic = kafka_topic(config={"cleanup.policy": "compact"})
    _round(kafka_broker, topic, 0)
    first = _stream(spark, kafka_broker, topic, checkpoint_dir, fail_on_data_loss)
    assert first == [(0, "a", "a0"), (1, "b", "b0"), (2, "c", "c0")]

    # Rounds 1 and 2 go to offsets 3-8; compaction removes 0-5, so the query's next
    # offset (3) is gone when it resumes.
    _round(kafka_broker, topic, 1)
    _round(kafka_broker, topic, 2)
    kafka_faults.compact_now(topic)

    second = _stream(spark, kafka_broker, topic, checkpoint_dir, fail_on_data_loss)
    assert second == [(6, "a", "a2"), (7, "b", "b2"), (8, "c", "c2"), (9, MARKER, None)]
