"""A topic named by `subscribe` (not a pattern) is deleted under a running query.

Unlike `subscribePattern` (test_topic_deleted.py), Spark 4.0's AdminClient-based
offset reader asks describeTopics for the named topic while planning the next
batch; the broker says UNKNOWN_TOPIC_OR_PARTITION, Spark retries
`fetchOffset.numRetries` times and the query dies with Kafka's exception, not a
KAFKA_DATA_LOSS error: failOnDataLoss=false does not help. Shown alike on the
emulator and on Kafka 4.1: the topic stays gone (nothing Spark does auto-creates
it), and the records written after the last batch are never read.

No release seed is needed: the driver looks at the topic on every trigger. Its
first attempt may race the deletion (describeTopics succeeds, ListOffsets then
fails with "Failed to fetch metadata for partition ..."); every later attempt
starts after the broker dropped the topic, so with two attempts the final error
is always describeTopics' own.
"""

from __future__ import annotations

import pytest
from scenario_support import checked_run, fail_on_data_loss

from kafkatest.scenarios import Expectations, RecordSet, Scenario, SeedSpec, Step

pytestmark = pytest.mark.spark

UNKNOWN_TOPIC = (
    "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
    "This server does not host this topic-partition."
)


def subscribed_topic_deleted(fail: bool) -> Scenario:
    return Scenario(
        name=f"subscribed-topic-deleted-fail-{str(fail).lower()}",
        job="kafkatest.scenarios.jobs:copy_stream",
        topics={"src": 1, "sink": 1},
        source="src",
        sink="sink",
        options={**fail_on_data_loss(str(fail).lower()), "fetchOffset.numRetries": "2"},
        seed=[SeedSpec("read", "src", 5)],
        steps=[
            Step(
                {"after_batch": 0},
                [
                    {"seed": {"label": "unread", "topic": "src", "count": 3}},
                    {"delete_topic": {"topic": "src"}},
                ],
            )
        ],
        expect=Expectations(
            outcome="fails",
            error=[UNKNOWN_TOPIC],
            delivery="expected_loss",
            lost=[RecordSet("unread")],
        ),
        timeout_s=60,
    )


@pytest.mark.parametrize("fail", [True, False], ids=["failOnDataLoss=true", "failOnDataLoss=false"])
def test_subscribed_topic_deleted_fails_whatever_fail_on_data_loss_says(
    fail: bool, spark, kafka_broker, checkpoint_dir
) -> None:
    scenario = subscribed_topic_deleted(fail)
    result = checked_run(scenario, kafka_broker, spark, checkpoint_dir)
    assert result.firings[0].batch_id == 0
    assert "KAFKA_DATA_LOSS" not in result.run.error
    assert not any(c.startswith("KAFKA_DATA_LOSS") for c in result.run.conditions)
    assert not kafka_broker.topic_exists(result.topics["src"]), "nothing auto-created it again"
