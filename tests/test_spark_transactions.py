"""Spark's Kafka source over a transactional topic, in both isolation levels.

`kafka.isolation.level` is handed to the connector's consumers and its Admin: with
read_committed a job reads committed records and plain ones, never aborted ones,
and stops at the last stable offset while a transaction is open; with the default
read_uncommitted it reads everything written. Markers take offsets the job never
sees as rows.
"""

from __future__ import annotations

import uuid

from confluent_kafka import Producer

from kafkatest import Broker
from kafkatest.spark import wait_for_query

TIMEOUT_S = 30


def write_transactions(broker: Broker, topic: str) -> None:
    """c1 c2 (0-1) committed (marker 2), a1 (3) aborted (marker 4), plain (5)."""
    producer = Producer(
        {**broker.client_config(), "transactional.id": f"spark-{uuid.uuid4().hex[:8]}"}
    )
    producer.init_transactions(TIMEOUT_S)
    producer.begin_transaction()
    producer.produce(topic, b"c1", partition=0)
    producer.produce(topic, b"c2", partition=0)
    producer.commit_transaction(TIMEOUT_S)
    producer.begin_transaction()
    producer.produce(topic, b"a1", partition=0)
    # Unflushed, a1 would be purged by the abort: its marker alone would move `plain`.
    assert producer.flush(TIMEOUT_S) == 0, f"a1 was not written within {TIMEOUT_S} s"
    producer.abort_transaction(TIMEOUT_S)
    plain = Producer(broker.client_config())
    plain.produce(topic, b"plain", partition=0)
    assert plain.flush(TIMEOUT_S) == 0


def batch_read(spark, broker: Broker, topic: str, isolation: str | None) -> list[tuple[int, bytes]]:
    reader = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", broker.bootstrap_servers)
        .option("subscribe", topic)
    )
    if isolation is not None:
        reader = reader.option("kafka.isolation.level", isolation)
    rows = reader.load().select("offset", "value").collect()
    return sorted((row.offset, bytes(row.value)) for row in rows)


def test_batch_reads_by_isolation_level(spark, kafka_broker: Broker, kafka_topic) -> None:
    topic = kafka_topic()
    write_transactions(kafka_broker, topic)
    assert batch_read(spark, kafka_broker, topic, "read_committed") == [
        (0, b"c1"),
        (1, b"c2"),
        (5, b"plain"),
    ]
    everything = [(0, b"c1"), (1, b"c2"), (3, b"a1"), (5, b"plain")]
    assert batch_read(spark, kafka_broker, topic, "read_uncommitted") == everything
    assert batch_read(spark, kafka_broker, topic, None) == everything


def test_read_committed_query_stalls_on_an_open_transaction(
    spark, kafka_broker: Broker, kafka_topic, kafka_faults, tmp_path
) -> None:
    """A hung transaction at offset 1: an AvailableNow read_committed query ends at the
    last stable offset (1), whatever is written after it; once the transaction is
    aborted the next run reads on past the abort marker."""
    topic = kafka_topic()
    plain = Producer(kafka_broker.client_config())
    plain.produce(topic, b"before", partition=0)
    assert plain.flush(TIMEOUT_S) == 0
    kafka_faults.hung_transaction(topic)
    plain.produce(topic, b"after", partition=0)
    assert plain.flush(TIMEOUT_S) == 0

    def run() -> list[tuple[int, bytes]]:
        """One AvailableNow run; every row the query has written so far."""
        query = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("kafka.isolation.level", "read_committed")
            .load()
            .select("offset", "value")
            .writeStream.format("parquet")
            .option("path", str(tmp_path / "out"))
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        wait_for_query(query)
        rows = spark.read.parquet(str(tmp_path / "out")).collect()
        return sorted((r.offset, bytes(r.value)) for r in rows)

    assert run() == [(0, b"before")]
    assert batch_read(spark, kafka_broker, topic, "read_uncommitted") == [
        (0, b"before"),
        (1, b"open-0"),
        (2, b"after"),
    ]
    kafka_faults.clear()  # aborts the transaction: marker at 3
    assert run() == [(0, b"before"), (2, b"after")]
