"""The restart oracle reaches its stops: it plans batches as Spark's rate limit cuts
them, places the input in fewer partitions if it must, and otherwise refuses before
running, saying how many records it needs."""

from __future__ import annotations

from typing import Any

import pytest
from oracle_jobs import dedup_stateful, payment
from pyspark.sql import SparkSession

from kafkatest import Broker
from kafkatest.oracles import OracleError, assert_restart_invariant
from kafkatest.oracles.batches import batch_ends

#: The oracles' own logic: the broker only feeds the job. The docs example
#: (test_docs_example.py) and the catch matrix run the oracles on real Kafka too.
pytestmark = pytest.mark.kafka_backends("emulator")


@pytest.fixture
def six(kafka_broker: Broker, kafka_topic: Any) -> list[dict[str, Any]]:
    """Six payments, two in each of three partitions: three accounts whose keys the
    producer's partitioner puts in three different partitions."""
    from kafkatest.seeding import seed

    placed = seed(
        kafka_broker,
        kafka_topic(partitions=3),
        [{"key": f"acct-{n}", "value": {}} for n in range(40)],
    )
    first: dict[int, str] = {}
    for record in placed.records:
        assert record.partition is not None and record.key is not None
        first.setdefault(record.partition, record.key.decode())
    accounts = [first[p] for p in sorted(first)]
    assert len(accounts) == 3
    return [
        payment(f"p{n}", accounts[n % 3], 1.0 + n, f"2024-05-01T10:00:{10 * n:02d}Z")
        for n in range(6)
    ]


def test_the_defaults_reach_their_stops_on_six_records(
    spark: SparkSession, kafka_broker: Broker, six: list[dict[str, Any]]
) -> None:
    """With three partitions the most Spark gives is two batches (a record of each
    partition per batch), short of after_batch:1's three: the oracle places the input
    in one partition instead, and says so."""
    report = assert_restart_invariant(dedup_stateful, six, spark=spark, broker=kafka_broker)

    assert report.partitions == 1
    assert "placed in 1 partition, not 3" in report.notes[0]
    assert [len(run.rows) - len(run.replayed_rows) for run in report.runs] == [6, 6, 6]
    crashed = report.runs[2]  # the Kafka sink holds the replayed batch's rows twice
    assert crashed.replayed_rows and report.comparisons[1].replayed == len(crashed.replayed_rows)


def test_the_batches_planned_are_the_batches_spark_ran(
    spark: SparkSession, kafka_broker: Broker
) -> None:
    limit = 2
    report = assert_restart_invariant(
        dedup_stateful,
        [payment(f"q{n}", "aab"[n % 3], 1.0, "2024-05-01T10:00:00Z") for n in range(9)],
        spark=spark,
        broker=kafka_broker,
        stops=("after_batch:0",),
        max_offsets_per_trigger=limit,
    )
    uninterrupted = report.runs[0]
    sizes: dict[int, int] = {}
    for partition, _offset in uninterrupted.placement:
        sizes[partition] = sizes.get(partition, 0) + 1
    planned = batch_ends(sizes, limit)
    ran = [b.end_offsets for b in uninterrupted.batches if b.end_offsets]
    assert [{p: o for p, o in ends.items() if o} for ends in ran] == planned


class _NoSpark:
    """Stands in for a session: the oracle refuses before it would start a query."""


def test_a_stop_no_batch_can_reach_is_refused_before_anything_runs(
    kafka_broker: Broker, six: list[dict[str, Any]]
) -> None:
    spark: Any = _NoSpark()
    with pytest.raises(
        OracleError, match=r"needs at least 3 micro-batches, but 6 records in 3 partition"
    ):
        assert_restart_invariant(
            dedup_stateful, six, spark=spark, broker=kafka_broker, partitions=3
        )
    with pytest.raises(OracleError, match="with max_offsets_per_trigger=4"):
        assert_restart_invariant(
            dedup_stateful, six, spark=spark, broker=kafka_broker, max_offsets_per_trigger=4
        )
