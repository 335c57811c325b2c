"""The bounded-state verdict and the oracle's refusals, without Spark: the criterion
on rows per batch, and arguments refused before anything runs."""

from __future__ import annotations

from typing import Any

import pytest

from kafkatest.oracles import OracleError, assert_state_bounded
from kafkatest.oracles.state_report import OperatorState, StateReport, grows
from kafkatest.state.operators import planned_operators


def test_state_that_keeps_every_key_grows_whatever_the_warmup() -> None:
    forever = [5 * (i + 1) for i in range(8)]
    assert all(grows(forever, warmup) for warmup in range(1, 7))
    # Keys the stream brings only now and then: still a new high after the warm-up.
    assert grows([5, 5, 10, 10, 10, 10, 10, 11], 4)


def test_state_a_watermark_bounds_levels_off_within_the_warmup() -> None:
    assert not grows([5, 10, 15, 15, 15, 15, 15, 15], 4)  # a horizon of two batches
    assert not grows([6, 12, 15, 9, 15, 9, 15, 9], 4)  # a join: before and after eviction
    assert not grows([0, 0, 0, 0, 0, 0, 0, 0], 4)
    # A horizon longer than the warm-up is not told apart from growth: the docs ask for
    # event time that moves fast enough.
    assert grows([5, 10, 15, 20, 25, 25, 25, 25], 4)


def test_the_report_names_the_operator_and_its_numbers() -> None:
    op = OperatorState(0, "dedupe", "StreamingDeduplicate", 0, rows=[5, 10, 15, 20, 25, 30])
    op.removed, op.grows = [0] * 6, True
    report = StateReport("jobs:dedup", 6, 3, records_per_batch=5, partitions=3, operators=[op])
    text = report.message()
    assert not report.ok
    assert "failed: the state of operator 0 (dedupe) grows with the stream" in text
    assert "rows after each batch 5 10 15 | 20 25 30 (warm-up | judged)" in text
    assert "grows: 30 rows after batch 5 (of 0-5), above its warm-up peak of 15" in text


def refused(**arguments: Any) -> str:
    options: dict[str, Any] = {"spark": object(), "broker": object(), **arguments}
    batches = options.pop("batch_records", lambda i: [{"i": i}])
    with pytest.raises((ValueError, TypeError, OracleError)) as error:
        assert_state_bounded("jobs:job", batches, **options)
    return str(error.value)


def test_arguments_are_refused_before_anything_runs() -> None:
    assert "batches must be 4 to 100" in refused(batches=3)
    assert "warmup must be 2 to batches - 2 (6)" in refused(warmup=7)
    assert "drop process=True" in refused(process=True)
    assert "batch_records must be a function" in refused(batch_records=[{"i": 1}])
    assert "got unexpected keyword arguments 'batch'" in refused(batch=2)
    text = refused(batch_records=lambda i: [{"i": i}] * (1 + (i == 3)))
    assert "gave 1, 1, 1, 2, 1, 1, 1, 1 records for batches 0 to 7" in text
    assert "same number of records" in refused(batch_records=lambda i: [])


PLAN = """== Physical Plan ==
WriteToDataSourceV2 MicroBatchWrite[epoch: 3, writer: ...]
+- StreamingSymmetricHashJoin [order_id#311], [order_id#315], Inner, condition = [ ... ], state info [ checkpoint = file:/c/state, runId = 63, opId = 1, ver = 5, numPartitions = 2] stateStoreCkptIds = None, 1714559220000, 1714559820000, state cleanup [ left = null, right value predicate: (ts#412-T300000ms <= 1714560419999000) ], 2, Append
   :- StateStoreSave [window#162-T60000ms, user#155], state info [ checkpoint = file:/c/state, runId = 70, opId = 0, ver = 1, numPartitions = 2] stateStoreCkptIds = None, Append, 0, 1714557780000, 2
   :  +- StateStoreRestore [window#162-T60000ms, user#155], state info [ checkpoint = file:/c/state, runId = 70, opId = 0, ver = 1, numPartitions = 2] stateStoreCkptIds = None, 2
   +- StreamingDeduplicate [id#15], state info [ checkpoint = file:/c/state, runId = ad, opId = 2, ver = 0, numPartitions = 2] stateStoreCkptIds = None, 0, 0
"""


def test_the_plan_names_each_stateful_node_and_why_it_is_never_evicted() -> None:
    join, window, dedup = planned_operators(PLAN)
    assert [(o.node, o.op_id) for o in (join, window, dedup)] == [
        ("StreamingSymmetricHashJoin", 1),
        ("StateStoreSave", 0),
        ("StreamingDeduplicate", 2),
    ]
    assert join.eviction().startswith("the join's left side has no state cleanup condition")
    assert window.watermarked_keys == ("window",) and window.eviction() == ""
    assert "its key (id) carries no watermarked column" in dedup.eviction()
