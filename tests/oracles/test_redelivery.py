"""Redelivery invariance: records delivered twice (a producer retry) must not change the sink."""

from __future__ import annotations

import pytest
from oracle_jobs import PAYMENTS, dedup_per_batch, dedup_stateful
from pyspark.sql import SparkSession

from kafkatest.brokers.base import Broker
from kafkatest.oracles import OracleAssertionError, assert_redelivery_invariant

#: The oracles' own logic: the broker only feeds the job. The docs example
#: (test_docs_example.py) and the catch matrix run the oracles on real Kafka too.
pytestmark = pytest.mark.kafka_backends("emulator")


def test_stateful_dedup_absorbs_copies_and_the_brokers_lost_acks(
    spark: SparkSession, kafka_broker: Broker
) -> None:
    report = assert_redelivery_invariant(
        dedup_stateful, PAYMENTS, spark=spark, broker=kafka_broker, copies=2
    )

    once, copied, *lost = report.runs
    assert [len(run.rows) for run in report.runs] == [8] * len(report.runs)
    assert len(copied.placement) == 2 * len(once.placement) == 20
    if kafka_broker.backend == "emulator":
        (lost_acks,) = lost
        copies = sum(1 for _index, copy in lost_acks.placement.values() if copy)
        assert lost_acks.name == "lost acks" and copies > 0  # the retry really duplicated
    else:
        assert lost == [] and "cannot lose a produce acknowledgement" in report.notes[0]


def test_dedup_within_each_batch_lets_the_later_copies_through(
    spark: SparkSession, kafka_broker: Broker
) -> None:
    with pytest.raises(OracleAssertionError) as caught:
        assert_redelivery_invariant(
            dedup_per_batch, PAYMENTS, spark=spark, broker=kafka_broker, lost_acks=False
        )

    (comparison,) = caught.value.report.comparisons
    assert comparison.other == "copies=2" and comparison.only_in_baseline == []
    # Every payment again: the copies came in the batch after their originals.
    assert sorted(d.row["key"] for d in comparison.only_in_other) == [f"p{n}" for n in range(1, 9)]
    assert "only in 'copies=2': 8 rows" in str(caught.value)
