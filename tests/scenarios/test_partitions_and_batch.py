"""A partition added with its first records already deleted, and a batch read past the log end."""

from __future__ import annotations

import pytest
from scenario_support import DATA_LOSS, checked_run, fail_on_data_loss

from kafkatest.scenarios import Expectations, RecordSet, Scenario, SeedSpec, Step
from kafkatest.spark.errors import data_loss_message

pytestmark = pytest.mark.spark

BOTH = pytest.mark.parametrize(
    "fail", [True, False], ids=["failOnDataLoss=true", "failOnDataLoss=false"]
)


@BOTH
def test_new_partition_starts_above_zero(fail: bool, spark, kafka_broker, checkpoint_dir) -> None:
    """src gets a partition 1 whose log starts at 3 by the time Spark first sees it.

    That takes a query that is down meanwhile (a running one sees the partition
    as soon as it exists, at 0), so the fault stops it after batch 0 and starts
    it again from its checkpoint. (Holding the batch back with
    minOffsetsPerTrigger instead hits a Spark 4.0.0 bug: the source's metrics
    look up the new partition in the last batch's offsets and the query fails
    with "key not found: <topic>-1", on both backends.)
    """
    fault = [
        {"stop_query": {}},
        {"add_partitions": {"topic": "src", "total": 2}},
        {"seed": {"label": "added", "topic": "src", "count": 6, "partition": 1}},
        {"delete_records": {"topic": "src", "before": {1: 3}}},
        {"seed": {"label": "release", "topic": "src", "count": 20}},
        {"start_query": {}},
    ]
    expect = (
        Expectations(
            outcome="fails",
            error=[
                "KAFKA_DATA_LOSS.ADDED_PARTITION_DOES_NOT_START_FROM_OFFSET_ZERO",
                DATA_LOSS,
                "starts from 3 instead of 0",
            ],
            delivery="expected_loss",
            lost=[RecordSet("added"), RecordSet("release")],
        )
        if fail
        else Expectations(
            outcome="continues",
            until={"src": {0: 25, 1: 6}},
            delivery="expected_loss",
            lost=[RecordSet("added", partition=1, start=0, end=3)],
        )
    )
    scenario = Scenario(
        name=f"added-partition-above-zero-fail-{str(fail).lower()}",
        job="kafkatest.scenarios.jobs:copy_stream",
        topics={"src": 1, "sink": 1},
        source="src",
        sink="sink",
        options=fail_on_data_loss(str(fail).lower()),
        seed=[SeedSpec("read", "src", 5)],
        steps=[Step({"after_batch": 0}, fault)],
        expect=expect,
        timeout_s=90,
    )
    checked_run(scenario, kafka_broker, spark, checkpoint_dir)


@BOTH
def test_batch_ending_offsets_beyond_the_log(
    fail: bool, spark, kafka_broker, checkpoint_dir
) -> None:
    """endingOffsets 100 on a 5-record partition: the task asks for offset 5, past the end.

    With true the read fails as data loss; with false Spark returns the 5 records
    and skips [5, 100), where nothing was ever written.
    """
    expect = (
        # What the failed write left in the sink depends on when the task died: not judged.
        Expectations(
            outcome="fails",
            error=["KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE", DATA_LOSS],
            delivery="none",
        )
        if fail
        else Expectations(outcome="finishes", delivery="expected_loss", lost=[])
    )
    scenario = Scenario(
        name=f"batch-ending-beyond-log-fail-{str(fail).lower()}",
        job="kafkatest.scenarios.jobs:copy_batch",
        mode="batch",
        topics={"src": 1, "sink": 1},
        source="src",
        sink="sink",
        options={
            "failOnDataLoss": str(fail).lower(),
            "kafkaConsumer.pollTimeoutMs": "5000",
            "endingOffsets": '{"{src}": {"0": 100}}',
        },
        seed=[SeedSpec("all", "src", 5)],
        expect=expect,
        timeout_s=90,
    )
    result = checked_run(scenario, kafka_broker, spark, checkpoint_dir)
    if fail:
        assert (
            data_loss_message("COULD_NOT_READ_OFFSET_RANGE", start=5, end=100) in result.run.error
        )
    else:
        assert result.delivery is not None
        assert result.delivery.expected_loss == [] and result.delivery.seen == 5
