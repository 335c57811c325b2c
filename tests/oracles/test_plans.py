"""What the oracles read from a query's plan: output mode, watermark column and delay,
the state's key. Plan text as Spark 3.5 and 4.x print it (shortened); the oracles'
Spark tests read real plans on every line, over classic Spark and Spark Connect."""

from __future__ import annotations

from kafkatest.spark.plans import Watermark, interval_ms, parse_plan

SPARK_42_WINDOWED = """
== Parsed Logical Plan ==
WriteToMicroBatchDataSource KafkaTable
+- ~Aggregate [window#263-T120000ms, account#252], [...]
   +- ~EventTimeWatermark 056439d8-fbd0-4ad9-8f3e-6b59c4759e2a, ts#254: timestamp, 2 minutes
== Physical Plan ==
WriteToDataSourceV2 MicroBatchWrite[epoch: 1, writer: KafkaStreamingWrite(...)]
+- *(4) HashAggregate(keys=[window#263-T120000ms, account#252], ...)
   +- StateStoreSave [window#263-T120000ms, account#252], state info [ checkpoint = file:/tmp/Complete/state, runId = 6, opId = 0, ver = 1, numPartitions = 2], Append, 1714557620000, 1714557620000, 2
"""

SPARK_35_WORDCOUNT = """
== Physical Plan ==
WriteToDataSourceV2 MicroBatchWrite[epoch: 0, writer: ...]
+- *(4) HashAggregate(keys=[word#15], functions=[count(1)])
   +- StateStoreSave [word#15], state info [ checkpoint = file:/tmp/ck/state, runId = 60, opId = 0, ver = 0, numPartitions = 2], Complete, 0, 0, 2
"""

SPARK_35_SESSIONS = """
== Analyzed Logical Plan ==
+- EventTimeWatermark ts#40: timestamp, 10 minutes
== Physical Plan ==
+- SessionWindowStateStoreSave [user#38], session_window#50-T600000ms, state info [ ... ], Update, 0, 0, 2
"""

STATELESS = """
== Physical Plan ==
WriteToDataSourceV2 MicroBatchWrite[epoch: 0, writer: ...]
+- *(1) Project [CAST(value#8 AS STRING) AS v#21]
"""


def test_a_windowed_aggregation_in_append_mode() -> None:
    plan = parse_plan(SPARK_42_WINDOWED)
    assert plan.output_mode == "append"  # not the "Complete" in the checkpoint path
    assert plan.watermarks == (Watermark("ts", 120_000),)
    assert plan.state_keys == ("window", "account")
    assert plan.stateful


def test_a_word_count_in_complete_mode() -> None:
    plan = parse_plan(SPARK_35_WORDCOUNT)
    assert plan.output_mode == "complete"
    assert plan.watermarks == ()
    assert plan.state_keys == ("word",)


def test_session_windows_in_update_mode_on_spark_35() -> None:
    plan = parse_plan(SPARK_35_SESSIONS)
    assert plan.output_mode == "update"
    assert plan.watermarks == (Watermark("ts", 600_000),)


def test_a_stateless_query_has_no_mode_and_no_state() -> None:
    plan = parse_plan(STATELESS)
    assert plan.output_mode is None and not plan.stateful and plan.state_keys == ()
    assert parse_plan("").output_mode is None


def test_spark_intervals() -> None:
    assert interval_ms("2 minutes") == 120_000
    assert interval_ms("interval 1 hours 30 minutes") == 5_400_000
    assert interval_ms("10 seconds") == 10_000
    assert interval_ms("none") is None


def test_what_lets_a_job_tell_a_copy_from_a_new_record() -> None:
    dedup = "+- StreamingDeduplicateWithinWatermark [payment_id#1], state info [...]"
    assert parse_plan(dedup).tells_copies_apart == "it deduplicates"
    state = "+- FlatMapGroupsInPandasWithState count(user#3), [user#3], ..., Update, ..."
    assert parse_plan(state).tells_copies_apart == "it keeps state of its own"
    sink = "~WriteToMicroBatchDataSourceV1 ForeachBatchSink, 1c76e715, [...], Append, 0"
    assert parse_plan(sink).tells_copies_apart.startswith("it runs code")
    assert parse_plan("+- MapInPandas f(v#57)#58, [v#59], false").tells_copies_apart
    assert parse_plan(SPARK_35_WORDCOUNT).tells_copies_apart is None
    assert parse_plan("").tells_copies_apart == "its plan is not known"
