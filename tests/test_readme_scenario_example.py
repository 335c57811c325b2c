import pytest

from kafkatest.assertions import assert_query_failed
from kafkatest.scenarios import Expectations, RecordSet, Scenario, SeedSpec, Step, run_scenario


@pytest.mark.parametrize("fail", ["true", "false"])
def test_records_deleted_before_the_query_read_them(fail, spark, kafka_broker, checkpoint_dir):
    scenario = Scenario(
        name=f"records-deleted-fail-{fail}",
        job="kafkatest.scenarios.jobs:copy_stream",  # module:function(spark, bootstrap, ...)
        topics={"src": 1, "sink": 1},
        source="src",
        sink="sink",
        options={
            "failOnDataLoss": fail,
            "trigger": "200 milliseconds",  # a running query (the default is availableNow)
            "minOffsetsPerTrigger": "20",  # batch 1 waits for the step's last seed: no race
            "maxTriggerDelay": "10m",
            "kafkaConsumer.pollTimeoutMs": "5000",
        },
        seed=[SeedSpec("read", "src", 5)],  # label, topic, count: offsets 0-4, read by batch 0
        steps=[
            Step(
                {"after_batch": 0},  # when batch 0 has committed
                [
                    {"seed": {"label": "unread", "topic": "src", "count": 5}},  # offsets 5-9
                    {"delete_records": {"topic": "src", "before": {0: 8}}},  # 5-7 are gone
                    {"seed": {"label": "release", "topic": "src", "count": 20}},
                ],
            )
        ],
        expect=(
            Expectations(outcome="fails", delivery="none")
            if fail == "true"
            else Expectations(
                outcome="continues",
                until={"src": {0: 30}},
                delivery="expected_loss",  # exactly these records are missing from the sink
                lost=[RecordSet("unread", partition=0, start=5, end=8)],
            )
        ),
        timeout_s=90,
    )
    result = run_scenario(scenario, kafka_broker, spark, checkpoint_dir)
    assert result.ok, result.text()  # .text(): what Spark did, when faults fired, the delivery
    if fail == "true":
        # The reason, as the table below names it: the same on PySpark 3.5, 4.0 and 4.2
        # (the offsets in the message are worded differently by each line).
        assert_query_failed(result.run, "COULD_NOT_READ_OFFSET_RANGE")
    # scenario.save("records-deleted.yaml") writes it for `kafkatest repro`.
