"""Restart invariance: a job whose sink changes when it resumes from its checkpoint is caught."""

from __future__ import annotations

import pytest
from oracle_jobs import PAYMENTS, append_files, dedup_stateful, overwrite_batch_dir
from pyspark.sql import SparkSession

from kafkatest.brokers.base import Broker
from kafkatest.oracles import OracleAssertionError, assert_restart_invariant
from kafkatest.oracles.compare import multiset_difference

#: The oracles' own logic: the broker only feeds the job. The docs example
#: (test_docs_example.py) and the catch matrix run the oracles on real Kafka too.
pytestmark = pytest.mark.kafka_backends("emulator")


def test_appending_files_without_the_batch_id_duplicates_the_replayed_batch(
    spark: SparkSession, kafka_broker: Broker
) -> None:
    with pytest.raises(OracleAssertionError) as caught:
        assert_restart_invariant(
            append_files,
            PAYMENTS,
            spark=spark,
            broker=kafka_broker,
            stops=("crash_before_commit:1",),
            max_offsets_per_trigger=3,
            sink="path",
        )

    report = caught.value.report
    uninterrupted, crashed = report.runs
    (comparison,) = report.comparisons
    assert comparison.only_in_baseline == []
    replayed = crashed.batches[1].end_offsets
    first = crashed.batches[0].end_offsets
    batch_size = sum(replayed[p] - first.get(p, 0) for p in replayed)
    assert len(comparison.only_in_other) == batch_size > 0  # batch 1, written twice
    assert len(crashed.rows) == len(uninterrupted.rows) + batch_size
    assert "replaying batch 1" in crashed.legs[0]
    assert "only in 'crash_before_commit:1'" in str(caught.value)


def test_overwriting_the_batch_directory_survives_a_stop_and_a_crash(
    spark: SparkSession, kafka_broker: Broker
) -> None:
    report = assert_restart_invariant(
        overwrite_batch_dir,
        PAYMENTS,
        spark=spark,
        broker=kafka_broker,
        stops=("after_batch:0", "crash_before_commit:1"),
        max_offsets_per_trigger=3,
        sink="path",
    )

    assert [len(run.rows) for run in report.runs] == [10, 10, 10]
    assert [len(run.legs) for run in report.runs] == [0, 1, 1]
    assert all(len(run.batches) >= 3 for run in report.runs)


def test_a_kafka_sink_replays_a_batch_and_duplicates_allow_accepts_only_that(
    spark: SparkSession, kafka_broker: Broker
) -> None:
    report = assert_restart_invariant(
        dedup_stateful,
        PAYMENTS,
        spark=spark,
        broker=kafka_broker,
        stops=("crash_before_commit:1",),
        max_offsets_per_trigger=3,
        duplicates="allow",
    )

    uninterrupted, crashed = report.runs
    assert len(uninterrupted.rows) == 8
    # The replayed batch reached the at-least-once Kafka sink twice ...
    assert len(crashed.rows) > 8
    # ... which the same comparison without duplicates="allow" calls a difference.
    (comparison,) = report.comparisons
    assert comparison.ok and comparison.duplicates == "allow"
    _, extra, _ = multiset_difference(uninterrupted.rows, crashed.rows, 1e-9)
    assert len(extra) == len(crashed.rows) - 8
