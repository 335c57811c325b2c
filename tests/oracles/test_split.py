"""Split invariance: a result that changes with the micro-batch boundaries is caught."""

from __future__ import annotations

import dataclasses

import pytest
from oracle_jobs import PAYMENTS, dedup_per_batch, dedup_stateful, payment, windowed_totals
from pyspark.sql import SparkSession

from kafkatest.brokers.base import Broker
from kafkatest.oracles import OracleAssertionError, assert_split_invariant

#: The oracles' own logic: the broker only feeds the job. The docs example
#: (test_docs_example.py) and the catch matrix run the oracles on real Kafka too.
pytestmark = pytest.mark.kafka_backends("emulator")


def test_stateful_dedup_gives_the_same_sink_however_the_input_is_split(
    spark: SparkSession, kafka_broker: Broker
) -> None:
    report = assert_split_invariant(dedup_stateful, PAYMENTS, spark=spark, broker=kafka_broker)

    assert report.ok and len(report.runs) == 3
    assert [len(run.rows) for run in report.runs] == [8, 8, 8]  # p1..p8 once each
    assert len(report.runs[1].batches) > len(report.runs[2].batches) > 1


def test_dedup_within_each_batch_only_fails_and_names_the_repeated_payments(
    spark: SparkSession, kafka_broker: Broker
) -> None:
    with pytest.raises(OracleAssertionError) as caught:
        assert_split_invariant(
            dedup_per_batch, PAYMENTS, spark=spark, broker=kafka_broker, splits=(None, 2)
        )

    report = caught.value.report
    (comparison,) = report.comparisons
    assert (comparison.baseline, comparison.other) == ("one batch", "maxOffsetsPerTrigger=2")
    assert comparison.only_in_baseline == []
    extra = sorted(d.row["key"] for d in comparison.only_in_other)
    assert extra == ["p2", "p5"]  # the repeats landed in another batch than their first copy
    for diff in comparison.only_in_other:
        assert len(diff.related) == 2 and not diff.explained_by_late_data
    message = str(caught.value)
    assert "'one batch' (8 rows) vs 'maxOffsetsPerTrigger=2' (10 rows)" in message
    assert "only in 'maxOffsetsPerTrigger=2': 2 rows" in message
    assert "#1 id=1 key='b'" in message and "#4 id=4 key='b'" in message


#: p3 is 30 s into the first minute, but arrives after p2 and p5 moved the event time
#: to 10:03: read in its own batch, it is behind the watermark (10:02); read with the
#: rest, it is not. All in one partition, so the order of arrival is this order.
LATE_ARRIVAL = [
    payment("p1", "a", 10.0, "2024-05-01T10:00:05Z"),
    payment("p2", "a", 1.0, "2024-05-01T10:03:00Z"),
    payment("p5", "b", 4.0, "2024-05-01T10:03:10Z"),
    payment("p3", "a", 5.0, "2024-05-01T10:00:30Z"),
    payment("p4", "a", 2.0, "2024-05-01T10:06:00Z"),
]


def test_a_window_that_loses_late_data_depending_on_the_split_names_the_late_record(
    spark: SparkSession, kafka_broker: Broker
) -> None:
    with pytest.raises(OracleAssertionError) as caught:
        assert_split_invariant(
            windowed_totals,
            LATE_ARRIVAL,
            spark=spark,
            broker=kafka_broker,
            splits=(None, 1),
            partitions=1,
        )

    report = caught.value.report
    (comparison,) = report.comparisons
    assert [d.row["value"]["total"] for d in comparison.only_in_baseline] == [15.0]
    assert [d.row["value"]["total"] for d in comparison.only_in_other] == [10.0]
    (late,) = comparison.late
    assert late.index == 3 and list(late.late_in) == ["maxOffsetsPerTrigger=1"]
    assert report.runs[1].watermark_column == "ts"  # read from the job's plan
    # Spark's documented behaviour, told apart from a bug: allow_late=True would pass it.
    assert comparison.explained_by_late_data and not comparison.ok
    assert dataclasses.replace(comparison, allow_late=True).ok
    message = str(caught.value)
    assert "records behind the watermark in one run only: 1" in message
    assert '"payment_id":"p3"' in message and "watermark 2024-05-01T10:02:10Z" in message
