"""Read a streaming query's memory sink (``format("memory").queryName(name)``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafkatest.sinks.frames import rows_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def memory_frame(spark: SparkSession, query_name: str) -> DataFrame:
    """The rows the memory sink holds so far, as a DataFrame.

    Call ``query.processAllAvailable()`` first so that the sink has caught up.
    """
    if not spark.catalog.tableExists(query_name):
        raise ValueError(
            f"no memory sink named {query_name!r}: start the query with "
            f".format('memory').queryName({query_name!r})"
        )
    return spark.table(query_name)


def memory_rows(spark: SparkSession, query_name: str) -> list[dict[str, Any]]:
    """The rows the memory sink holds so far, as plain dicts."""
    return rows_of(memory_frame(spark, query_name))
