"""Reading Spark's file, memory and foreachBatch sinks, and asserting on DataFrames."""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

from kafkatest.assertions import (
    DeliveryAssertionError,
    assert_at_least_once,
    assert_exactly_once,
    assert_frames_equal,
)
from kafkatest.sinks import (
    BatchCapture,
    file_frame,
    file_rows,
    frame_of,
    memory_frame,
    memory_rows,
    rows_of,
)

ORDERS = [
    {"order_id": "o-1", "user": "ann", "total": 12.5},
    {"order_id": "o-2", "user": "bob", "total": 3.0},
    {"order_id": "o-3", "user": "ann", "total": 7.25},
]
SCHEMA = "order_id STRING, user STRING, total DOUBLE"


@pytest.mark.parametrize("format", ["parquet", "json", "csv"])
def test_file_sinks_read_back_as_rows_and_frames(spark, tmp_path, format):
    path = str(tmp_path / format)
    writer = frame_of(spark, ORDERS, SCHEMA).coalesce(1).write.format(format)
    writer.option("header", "true").save(path) if format == "csv" else writer.save(path)
    schema = SCHEMA if format == "csv" else None
    rows = sorted(file_rows(spark, path, format, schema=schema), key=lambda r: r["order_id"])
    assert rows == ORDERS
    assert file_frame(spark, path, format, schema=schema).count() == 3


def test_csv_rows_match_seeded_numbers_as_text(spark, tmp_path):
    path = str(tmp_path / "csv")
    frame_of(spark, ORDERS, SCHEMA).write.option("header", "true").csv(path)
    rows = file_rows(spark, path, "csv")  # no schema: every column is text
    assert assert_exactly_once(ORDERS, rows, on="order_id").ok


@pytest.mark.skipif(importlib.util.find_spec("delta") is not None, reason="delta-spark installed")
def test_delta_without_delta_spark_says_what_to_install(spark, tmp_path):
    from kafkatest.errors import SetupError

    with pytest.raises(SetupError, match="pip install delta-spark"):
        file_frame(spark, tmp_path, "delta")


def test_unknown_file_format_is_refused(spark, tmp_path):
    with pytest.raises(ValueError, match="format must be one of"):
        file_frame(spark, tmp_path, "avro")


def _json_stream(spark, source):
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))


def _write_batches(source, batches):
    """One file per batch; modification times fix the order the file source takes them in."""
    source.mkdir()
    for index, batch in enumerate(batches):
        file = source / f"part-{index}.json"
        file.write_text("\n".join(json.dumps(r) for r in batch))
        os.utime(file, (1_700_000_000 + index, 1_700_000_000 + index))


def test_memory_sink_rows(spark, tmp_path, checkpoint_dir):
    _write_batches(tmp_path / "in", [ORDERS[:2], ORDERS[2:]])
    query = (
        _json_stream(spark, tmp_path / "in")
        .writeStream.format("memory")
        .queryName("kafkatest_memory_sink")
        .option("checkpointLocation", str(checkpoint_dir))
        .start()
    )
    try:
        query.processAllAvailable()
        assert assert_exactly_once(ORDERS, memory_rows(spark, "kafkatest_memory_sink")).ok
        assert memory_frame(spark, "kafkatest_memory_sink").count() == 3
    finally:
        query.stop()
    with pytest.raises(ValueError, match="no memory sink named 'never_started'"):
        memory_frame(spark, "never_started")


def test_foreach_batch_capture_keeps_batch_ids(spark, tmp_path, checkpoint_dir):
    _write_batches(tmp_path / "in", [ORDERS[:2], ORDERS[2:]])
    capture = BatchCapture()
    query = (
        _json_stream(spark, tmp_path / "in")
        .writeStream.foreachBatch(capture)
        .option("checkpointLocation", str(checkpoint_dir))
        .start()
    )
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert capture.batch_ids == [0, 1]
    assert [r["order_id"] for r in capture.batches()[1]] == ["o-3"]
    assert capture.rows[0] == {**ORDERS[0], "batch_id": 0}
    frame = capture.frame(spark)
    assert frame.columns == ["order_id", "user", "total", "batch_id"]
    assert sorted(rows_of(frame), key=lambda r: r["order_id"])[2]["batch_id"] == 1
    with pytest.raises(DeliveryAssertionError) as caught:
        assert_exactly_once(ORDERS[:2], capture.rows, on="order_id")
    assert "unexpected: 1\n  - id o-3 seen 1x at batch 1, row 2 " in str(caught.value)


def test_an_empty_capture_has_no_frame(spark):
    with pytest.raises(ValueError, match="no batch was captured yet"):
        BatchCapture().frame(spark)


def test_dataframes_feed_the_delivery_assertions(spark):
    actual = frame_of(spark, [*ORDERS, ORDERS[0]], SCHEMA)
    assert assert_at_least_once(frame_of(spark, ORDERS, SCHEMA), actual, on="order_id").ok
    with pytest.raises(DeliveryAssertionError, match="1 duplicated"):
        assert_exactly_once(ORDERS, actual, on="order_id")


def test_frames_equal_through_chispa_ignoring_columns(spark):
    expected = frame_of(spark, ORDERS, SCHEMA)
    changed = frame_of(spark, [{**r, "total": 0.0} for r in reversed(ORDERS)], SCHEMA)
    assert_frames_equal(expected, changed, ignore=["total"])
    with pytest.raises(AssertionError, match="DataFrames differ \\(DataFramesNotEqualError\\)"):
        assert_frames_equal(expected, changed)
    with pytest.raises(AssertionError, match="SchemasNotEqualError"):
        assert_frames_equal(expected, changed.drop("total"))
