"""Data-loss reasons read off Spark 4's conditions and Spark 3.5's messages, without Spark."""

from __future__ import annotations

import pytest

from kafkatest.scenarios import JobRun
from kafkatest.spark import errors as spark_errors
from kafkatest.spark.errors import (
    DATA_LOSS,
    DATA_LOSS_WORDING,
    data_loss_message,
    data_loss_reasons,
)

# Spark 3.5.7's words, as its connector failed the scenarios in tests/scenarios/.
INSTRUCTION = f"{DATA_LOSS}; either the\n data was aged out by Kafka or the topic may have been"
SPARK3 = {
    "COULD_NOT_READ_OFFSET_RANGE": (
        "java.lang.IllegalStateException: Cannot fetch offset 5 (GroupId: g-executor, "
        f"TopicPartition: src-0). \n{INSTRUCTION}"
    ),
    "ADDED_PARTITION_DOES_NOT_START_FROM_OFFSET_ZERO": (
        f"Added partition src-1 starts from 3 instead of 0. Some data may have been missed. \n{INSTRUCTION}"
    ),
    "PARTITIONS_DELETED": f"Set(a-0) are gone. Some data may have been missed.. \n{INSTRUCTION}",
    "PARTITION_OFFSET_CHANGED": (
        f"Partition a-0's offset was changed from 5 to 3, some data may have been missed. \n{INSTRUCTION}"
    ),
}


def test_both_spark_lines_word_the_same_reasons() -> None:
    assert set(DATA_LOSS_WORDING[3]) == set(DATA_LOSS_WORDING[4])


@pytest.mark.parametrize("reason", sorted(SPARK3))
def test_spark3_messages_name_exactly_their_reason(reason: str) -> None:
    assert data_loss_reasons(SPARK3[reason], major=3) == [reason]
    # Spark 4 names a reason only by its condition: a 3.5 message is none of them.
    assert data_loss_reasons(SPARK3[reason], major=4) == []


def test_spark4_names_the_reason_by_its_condition() -> None:
    conditions = ["STREAM_FAILED", "KAFKA_DATA_LOSS.PARTITIONS_DELETED"]
    assert data_loss_reasons("[STREAM_FAILED] ...", conditions, major=4) == ["PARTITIONS_DELETED"]


def test_a_timeout_is_no_data_loss() -> None:
    text = "java.util.concurrent.TimeoutException: Cannot fetch record for offset 5 in 5000 milliseconds"
    assert data_loss_reasons(text, major=3) == []


def test_messages_with_offsets_per_line() -> None:
    reason = "COULD_NOT_READ_OFFSET_RANGE"
    assert (
        data_loss_message(reason, 4, start=5, end=30) == "Could not read records in offset [5, 30)"
    )
    assert data_loss_message(reason, 3, start=5, end=30) in SPARK3[reason]
    changed = data_loss_message("PARTITION_OFFSET_CHANGED", 3, start=5, end=3)
    assert changed in SPARK3["PARTITION_OFFSET_CHANGED"]


def test_the_report_names_a_spark3_data_loss_in_spark4_terms(monkeypatch) -> None:
    monkeypatch.setattr(spark_errors, "spark_major", lambda: 3)
    run = JobRun(
        "failed",
        "StreamingQueryException",
        SPARK3["COULD_NOT_READ_OFFSET_RANGE"],
        ("STREAM_FAILED",),
    )
    assert (
        "[data loss in Spark 4's terms: KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE]" in run.line()
    )
    monkeypatch.setattr(spark_errors, "spark_major", lambda: 4)
    assert "in Spark 4's terms" not in run.line()
