"""Records gone before the query reached them: an executor asks for an offset that is gone.

After batch 0 read src[0] 0..4, offsets 5..9 are written and then removed in one of the
two ways the integration guide names: DeleteRecords moves the log start to 8, or
retention ages out everything written so far (log start 10). Batch 1 then plans
[5, 30) and its task seeks to 5.
"""

from __future__ import annotations

import pytest
from scenario_support import DATA_LOSS, checked_run, fail_on_data_loss

from kafkatest.scenarios import Expectations, RecordSet, Scenario, SeedSpec, Step
from kafkatest.spark.errors import data_loss_message

pytestmark = pytest.mark.spark


#: How the unread records go, and the offsets of src[0] that this loses.
REMOVALS = {
    "delete_records": ({"delete_records": {"topic": "src", "before": {0: 8}}}, range(5, 8)),
    "aged_out": ({"age_out_records": {"topic": "src"}}, range(5, 10)),
}


def records_deleted(fail: bool, removal: str = "delete_records") -> Scenario:
    action, lost = REMOVALS[removal]
    if fail:
        expect = Expectations(
            outcome="fails",
            error=["KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE", DATA_LOSS],
            delivery="expected_loss",
            lost=[RecordSet("unread"), RecordSet("release")],
        )
    else:
        expect = Expectations(
            outcome="continues",
            until={"src": {0: 30}},
            delivery="expected_loss",
            lost=[RecordSet("unread", partition=0, start=lost.start, end=lost.stop)],
        )
    return Scenario(
        name=f"records-{'deleted' if removal == 'delete_records' else 'aged-out'}"
        f"-before-read-fail-{str(fail).lower()}",
        job="kafkatest.scenarios.jobs:copy_stream",
        topics={"src": 1, "sink": 1},
        source="src",
        sink="sink",
        options=fail_on_data_loss(str(fail).lower()),
        seed=[SeedSpec("read", "src", 5)],
        steps=[
            Step(
                {"after_batch": 0},
                [
                    {"seed": {"label": "unread", "topic": "src", "count": 5}},
                    action,
                    {"seed": {"label": "release", "topic": "src", "count": 20}},
                ],
            )
        ],
        expect=expect,
        timeout_s=90,
    )


@pytest.mark.parametrize("removal", sorted(REMOVALS))
@pytest.mark.parametrize("fail", [True, False], ids=["failOnDataLoss=true", "failOnDataLoss=false"])
def test_records_gone_before_the_query_read_them(
    fail: bool, removal: str, spark, kafka_broker, checkpoint_dir
) -> None:
    result = checked_run(records_deleted(fail, removal), kafka_broker, spark, checkpoint_dir)
    assert result.firings[0].batch_id == 0
    if fail:
        # The executor, not the driver, found the gap: Spark 4 names the task's whole range
        # ("Could not read records in offset [5, 30)"), 3.5 its first offset ("Cannot fetch offset 5").
        assert data_loss_message("COULD_NOT_READ_OFFSET_RANGE", start=5, end=30) in result.run.error
    else:
        assert result.delivery is not None
        lost = list(REMOVALS[removal][1])
        assert sorted(e.origin.offset for e in result.delivery.expected_loss) == lost
