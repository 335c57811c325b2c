"""Topics deleted under a running query, found by the driver when it plans a batch.

The job subscribes by pattern to topics a and b (with `subscribe`, a missing topic
fails describeTopics whatever failOnDataLoss says: test_subscribed_topic_deleted.py). After batch 0, three records
are written to a that the query never reads, then a goes away; records to b let
the next batch run, and that batch finds a's partitions gone.
"""

from __future__ import annotations

import pytest
from scenario_support import DATA_LOSS, checked_run, fail_on_data_loss

from kafkatest.scenarios import Expectations, RecordSet, Scenario, SeedSpec, Step
from kafkatest.spark.errors import data_loss_message

pytestmark = pytest.mark.spark

#: A partition that vanishes between Spark's describe and its ListOffsets is asked for
#: again until the admin client's `default.api.timeout.ms` (60 s; no less than
#: `request.timeout.ms`): 15 s bounds that wait (docs/how-to/data-loss.md).
VANISHING = {"kafka.request.timeout.ms": "15000", "kafka.default.api.timeout.ms": "15000"}

BOTH = pytest.mark.parametrize(
    "fail", [True, False], ids=["failOnDataLoss=true", "failOnDataLoss=false"]
)


def pattern_scenario(
    name: str, fail: bool, fault: list[dict], expect: Expectations, **kw
) -> Scenario:
    """Two topics read by one pattern; `kw` may give a's partitions and more seeds."""
    return Scenario(
        name=f"{name}-fail-{str(fail).lower()}",
        job="kafkatest.scenarios.jobs:copy_stream",
        topics={"a": kw.get("a_partitions", 1), "b": 1, "sink": 1},
        source="a",
        sink="sink",
        options={
            **fail_on_data_loss(str(fail).lower()),
            **VANISHING,
            "subscribePattern": "^({a}|{b})$",
        },
        seed=kw.get("seed", [SeedSpec("read-a", "a", 5), SeedSpec("read-b", "b", 5)]),
        steps=[Step({"after_batch": 0}, fault)],
        expect=expect,
        timeout_s=90,
    )


@BOTH
def test_topic_deleted_mid_stream(fail: bool, spark, kafka_broker, checkpoint_dir) -> None:
    fault = [
        {"seed": {"label": "unread-a", "topic": "a", "count": 3}},
        {"delete_topic": {"topic": "a"}},
        {"seed": {"label": "release", "topic": "b", "count": 20}},
    ]
    expect = (
        Expectations(
            outcome="fails",
            error=["KAFKA_DATA_LOSS.PARTITIONS_DELETED", DATA_LOSS],
            delivery="expected_loss",
            lost=[RecordSet("unread-a"), RecordSet("release")],
        )
        if fail
        else Expectations(
            outcome="continues",
            until={"b": {0: 25}},
            delivery="expected_loss",
            lost=[RecordSet("unread-a")],
        )
    )
    result = checked_run(
        pattern_scenario("topic-deleted", fail, fault, expect), kafka_broker, spark, checkpoint_dir
    )
    if fail:
        # 4.x: "Partitions Set(<a>-0) have been deleted."; 3.5: "Set(<a>-0) are gone."
        gone = f"{result.topics['a']}-0){data_loss_message('PARTITIONS_DELETED')}"
        assert gone in result.run.error
    else:
        # Only what was deleted unread is missing: a[0] offsets 5..7.
        assert result.delivery is not None
        assert sorted(e.id for e in result.delivery.expected_loss) == [
            "unread-a-0",
            "unread-a-1",
            "unread-a-2",
        ]


@BOTH
def test_topic_deleted_and_recreated(fail: bool, spark, kafka_broker, checkpoint_dir) -> None:
    """The new a ends (3) below where the query stood (5): Spark says the offset changed.

    With false, the next batch starts a at its new end, so the recreated topic's
    first records are skipped too, not only the old unread ones.
    """
    fault = [
        {"seed": {"label": "unread-a", "topic": "a", "count": 3}},
        {"recreate_topic": {"topic": "a"}},
        {"seed": {"label": "new-a", "topic": "a", "count": 3}},
        {"seed": {"label": "release", "topic": "b", "count": 25}},
    ]
    expect = (
        Expectations(
            outcome="fails",
            error=[
                "KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED",
                DATA_LOSS,
                "offset was changed from 5 to 3",
            ],
            delivery="expected_loss",
            lost=[RecordSet("unread-a"), RecordSet("new-a"), RecordSet("release")],
        )
        if fail
        else Expectations(
            outcome="continues",
            until={"b": {0: 30}},
            delivery="expected_loss",
            lost=[RecordSet("unread-a"), RecordSet("new-a")],
        )
    )
    checked_run(
        pattern_scenario("topic-recreated", fail, fault, expect),
        kafka_broker,
        spark,
        checkpoint_dir,
    )


@BOTH
def test_partition_disappeared(fail: bool, spark, kafka_broker, checkpoint_dir) -> None:
    """a is recreated with one partition instead of two: a-1 is gone.

    With false, Spark drops a-1 and resumes the new a-0 where the old one stood
    (3), silently skipping the new a-0's records 0..2: no warning names them.
    """
    seed = [
        SeedSpec("read-a0", "a", 3, partition=0),
        SeedSpec("read-a1", "a", 3, partition=1),
        SeedSpec("read-b", "b", 5),
    ]
    fault = [
        {"recreate_topic": {"topic": "a", "partitions": 1}},
        {"seed": {"label": "new-a", "topic": "a", "count": 4}},
        {"seed": {"label": "release", "topic": "b", "count": 20}},
    ]
    expect = (
        Expectations(
            outcome="fails",
            error=["KAFKA_DATA_LOSS.PARTITIONS_DELETED", DATA_LOSS],
            delivery="expected_loss",
            lost=[RecordSet("new-a"), RecordSet("release")],
        )
        if fail
        else Expectations(
            outcome="continues",
            until={"a": {0: 4}, "b": {0: 25}},
            delivery="expected_loss",
            lost=[RecordSet("new-a", partition=0, start=0, end=3)],
        )
    )
    result = checked_run(
        pattern_scenario("partition-gone", fail, fault, expect, a_partitions=2, seed=seed),
        kafka_broker,
        spark,
        checkpoint_dir,
    )
    if fail:  # a-1 is the partition named gone, on either Spark line
        gone = f"{result.topics['a']}-1){data_loss_message('PARTITIONS_DELETED')}"
        assert gone in result.run.error
