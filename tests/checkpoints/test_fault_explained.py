"""A delivery report after a checkpoint fault names the batch the restarted job ran
again and the records that reached the sink twice because of it.

The stateful payments job (tests/checkpoints/checkpoint_fault_support.py) reads
payments 0-8 in batches 0-2; payments 9-11 are added; the latest commit is removed
(`crash-before-commit`, the state a driver killed between its sink write and its commit
leaves) and the job restarted on the same checkpoint and sink. Spark replays batch 2
with the offsets it planned, so payments 6-8 reach the sink twice, and the explanation
read from the checkpoint's logs says so in the assertion's message.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from checkpoint_fault_support import payments, start_dedup
from pyspark.sql import SparkSession

from kafkatest.assertions import DeliveryAssertionError, assert_exactly_once
from kafkatest.brokers.base import Broker
from kafkatest.checkpoints import record_checkpoint_fault
from kafkatest.oracles import read_topic
from kafkatest.seeding import seed
from kafkatest.spark import wait_for_query


def test_the_delivery_report_names_the_replayed_batch_and_its_records(
    spark: SparkSession, kafka_broker: Broker, tmp_path: Path
) -> None:
    source, sink = f"explained-in-{tmp_path.name[-10:]}", f"explained-out-{tmp_path.name[-10:]}"
    kafka_broker.create_topic(source, partitions=1)
    kafka_broker.create_topic(sink, partitions=1)
    checkpoint = tmp_path / "checkpoint"
    first = seed(kafka_broker, source, payments(0, 9), id_field="payment_id")
    bootstrap = kafka_broker.bootstrap_servers
    wait_for_query(start_dedup(spark, bootstrap, source, sink, checkpoint), timeout_s=300)
    later = seed(kafka_broker, source, payments(9, 3), id_field="payment_id")

    recorded = record_checkpoint_fault(checkpoint, "crash-before-commit")
    wait_for_query(start_dedup(spark, bootstrap, source, sink, checkpoint), timeout_s=300)
    explanation = recorded.explain()

    assert explanation.replayed_batches == [2]
    assert explanation.new_batches == [3]
    assert explanation.records_again == 3
    assert explanation.skipped == {}
    with pytest.raises(DeliveryAssertionError) as failed:
        assert_exactly_once(
            [*first, *later],
            read_topic(kafka_broker, sink),
            on="value.payment_id",
            explain=explanation,
        )
    message = str(failed.value)
    assert "3 duplicated" in message
    assert (
        f"records 6-8 of {source}[0] were written twice: batch 2 was replayed after "
        "commits/2 was deleted (crash-before-commit)"
    ) in message, message
    assert (
        "logs before the fault: offsets 0-2, commits 0-2; after it: offsets 0-2, commits 0-1"
        in message
    )
    assert f"batch 3 (new) read {source}[0] offsets 9-11" in message
