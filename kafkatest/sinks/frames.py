"""Move rows between Spark DataFrames and plain Python, the two shapes tests use."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType


def is_dataframe(obj: object) -> bool:
    """True for a Spark DataFrame (classic or Connect), without importing pyspark."""
    return hasattr(obj, "collect") and hasattr(obj, "columns") and hasattr(obj, "schema")


def rows_of(frame: DataFrame) -> list[dict[str, Any]]:
    """Collect a DataFrame as dicts (nested structs become dicts too).

    Only for the small outputs of a test: everything comes to the driver.
    """
    return [row.asDict(recursive=True) for row in frame.collect()]


def frame_of(
    spark: SparkSession,
    rows: Iterable[Mapping[str, Any]],
    schema: StructType | str | None = None,
) -> DataFrame:
    """A DataFrame of plain rows, for chispa comparisons or Spark-side checks.

    Pass `schema` when rows hold nested dicts or nulls that Spark cannot infer.
    """
    data = [dict(row) for row in rows]
    if schema is None and not data:
        raise ValueError("cannot infer a schema from no rows: pass schema")
    # PySpark infers rows from dicts at runtime; its stub's RowLike leaves dicts out.
    dict_rows = cast("list[Any]", data)
    if schema is None:
        return spark.createDataFrame(dict_rows)
    return spark.createDataFrame(dict_rows, schema=schema)
