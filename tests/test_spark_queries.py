"""`wait_for_query`: a query that does not end is stopped with a one-line reason."""

from __future__ import annotations

import pytest

from kafkatest.spark import QueryTimeout, wait_for_query


def test_a_timeout_says_where_the_query_got_to_and_what_to_do_in_one_line(spark):
    """The message names the last batch and the remedy; the progress JSON is an attribute.

    It used to end with the whole progress report, a screen of JSON that PySpark 3.5
    prints on one line and pytest repeats in its summary.
    """
    query = (
        spark.readStream.format("rate")
        .option("rowsPerSecond", 5)
        .load()
        .writeStream.format("noop")
        .trigger(processingTime="1 second")
        .queryName("never-ends")
        .start()
    )
    with pytest.raises(QueryTimeout) as caught:
        wait_for_query(query, timeout_s=3)
    message = str(caught.value)
    assert not query.isActive
    assert message.startswith("streaming query never-ends still running after 3s and was stopped")
    assert "\n" not in message and '"id"' not in message and "numInputRows" not in message
    assert "wait_for_query(query, timeout_s=300)" in message
    progress = caught.value.progress
    if progress is None:  # no batch finished in 3 s on a loaded machine
        assert "(no batch had finished)" in message
    else:
        assert f"last batch {progress['batchId']} read {progress['numInputRows']} rows" in message
        assert "RateStreamV2" in message or "RateSource" in message


def test_python_workers_run_the_interpreter_of_the_test_process(spark):
    """Not the first `python3` on PATH: run from a virtualenv that is not activated
    (`venv/bin/pytest`, or the warm server a nox session starts), that was another
    Python whose pyarrow broke applyInPandasWithState."""
    import os
    import sys

    assert os.environ["PYSPARK_PYTHON"] == sys.executable
    worker = spark.sparkContext.parallelize([0], 1).map(lambda _: __import__("sys").executable)
    assert os.path.realpath(worker.first()) == os.path.realpath(sys.executable)
