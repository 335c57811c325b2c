"""Output modes and sinks: the oracles read a sink the way the job writes it.

Apache Spark's own word count (complete mode) passes all three oracles into a topic
(read as the table it represents: the last count per word) and into a memory sink
(its final contents), with no read_sink written by hand; compared row by row, the
topic would hold every batch's whole table (a false alarm the oracles used to raise).
"""

from __future__ import annotations

import pytest
from corpus import shapes_stateful as stateful
from pyspark.sql import SparkSession

from kafkatest import Broker
from kafkatest.oracles import (
    OracleError,
    assert_redelivery_invariant,
    assert_restart_invariant,
    assert_split_invariant,
)

#: How the oracles read a sink per output mode: kafkatest's own logic, the broker only
#: feeds the job (the catch matrix runs the word count on real Kafka too).
pytestmark = pytest.mark.kafka_backends("emulator")


def test_the_word_count_into_a_topic_passes_all_three(
    spark: SparkSession, kafka_broker: Broker
) -> None:
    job, lines = stateful.word_count, stateful.LINES
    split = assert_split_invariant(job, lines, spark=spark, broker=kafka_broker, splits=(None, 1))
    restart = assert_restart_invariant(job, lines, spark=spark, broker=kafka_broker)
    redelivery = assert_redelivery_invariant(job, lines, spark=spark, broker=kafka_broker)

    one, per_record = split.runs
    assert {row["key"]: row["value"]["count"] for row in one.rows}["apache"] == 4
    assert one.plan is not None and one.plan.output_mode == "complete"
    assert len(per_record.batches) > 1  # each batch wrote the whole table again
    assert "the same rows" in split.comparisons[0].verdict()
    assert restart.ok and len(restart.runs) == 3
    # A word count counts what it reads: a copy is input, not something to absorb.
    assert redelivery.not_applicable.startswith("nothing in the job's plan can tell a copy")
    assert "not applicable" in redelivery.message()


def test_the_word_count_into_a_memory_sink_passes_all_three(
    spark: SparkSession, kafka_broker: Broker
) -> None:
    job, lines = stateful.word_count_to_memory, stateful.LINES
    split = assert_split_invariant(
        job, lines, spark=spark, broker=kafka_broker, sink="memory", splits=(None, 1)
    )
    assert_restart_invariant(job, lines, spark=spark, broker=kafka_broker, sink="memory")
    assert_redelivery_invariant(job, lines, spark=spark, broker=kafka_broker, sink="memory")

    assert {row["word"]: row["count"] for row in split.runs[0].rows}["streaming"] == 3
    assert all(run.sink.isidentifier() for run in split.runs)  # a valid memory sink name
    # The oracle's tables are gone with the oracle.
    assert not any(spark.catalog.tableExists(run.sink) for run in split.runs)


def test_the_output_mode_given_overrides_the_plan(
    spark: SparkSession, kafka_broker: Broker
) -> None:
    """Read as append, every batch's whole table counts: the split differs (what the
    oracle did before it read the output mode)."""
    from kafkatest.oracles import OracleAssertionError

    with pytest.raises(OracleAssertionError, match="only in 'maxOffsetsPerTrigger=1'"):
        assert_split_invariant(
            stateful.word_count,
            stateful.LINES,
            spark=spark,
            broker=kafka_broker,
            splits=(None, 1),
            output_mode="append",
        )


def test_a_memory_sink_in_append_mode_cannot_be_restarted_and_says_so(
    spark: SparkSession, kafka_broker: Broker
) -> None:
    from corpus import shapes_simple as simple
    from corpus.common import CLICKS

    def unique_to_memory(spark, bootstrap, source, sink, checkpoint, *, options):
        frame = simple.clicks(spark, bootstrap, source, options).dropDuplicates(["event_id"])
        writer = frame.writeStream.format("memory").queryName(sink)
        return simple.started(writer, checkpoint, options)

    with pytest.raises(
        OracleError, match="a memory sink cannot resume from its checkpoint in append"
    ):
        assert_restart_invariant(
            unique_to_memory, CLICKS, spark=spark, broker=kafka_broker, sink="memory"
        )


def test_a_table_sink_without_keys_is_refused_with_what_to_do(
    spark: SparkSession, kafka_broker: Broker
) -> None:
    def unkeyed_counts(spark, bootstrap, source, sink, checkpoint, *, options):
        from pyspark.sql import functions as F

        lines = stateful.source(spark, bootstrap, source, options).selectExpr(
            "CAST(value AS STRING) AS line"
        )
        counts = lines.select(F.explode(F.split("line", " ")).alias("word")).groupBy("word").count()
        rows = counts.select(F.to_json(F.struct("word", "count")).alias("value"))
        return stateful.kafka_sink(rows, bootstrap, sink, checkpoint, options, mode="complete")

    with pytest.raises(OracleError, match="Write the grouping column as the Kafka key"):
        assert_split_invariant(
            unkeyed_counts, stateful.LINES, spark=spark, broker=kafka_broker, splits=(None, 2)
        )
