"""Read the files a Spark job wrote (parquet, json, csv, delta) back for assertions."""

from __future__ import annotations

import importlib.util
import os
from typing import TYPE_CHECKING, Any

from kafkatest.errors import SetupError
from kafkatest.sinks.frames import rows_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

FORMATS = ("parquet", "json", "csv", "delta")


def file_frame(
    spark: SparkSession,
    path: str | os.PathLike[str],
    format: str = "parquet",
    *,
    schema: StructType | str | None = None,
    options: dict[str, str] | None = None,
) -> DataFrame:
    """The files under `path` as a DataFrame, read with the format the job wrote.

    CSV is read with a header row by default, as Spark jobs usually write it.
    Delta needs the delta-spark package and a session started with
    `kafkatest.sinks.delta.delta_spark_conf()`.
    """
    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, not {format!r}")
    if format == "delta":
        _check_delta(spark)
    settings = {"header": "true"} if format == "csv" else {}
    settings.update(options or {})
    reader = spark.read.format(format).options(**settings)
    if schema is not None:
        reader = reader.schema(schema)
    return reader.load(os.fspath(path))


def file_rows(
    spark: SparkSession,
    path: str | os.PathLike[str],
    format: str = "parquet",
    *,
    schema: StructType | str | None = None,
    options: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The files under `path` as plain dicts (see `file_frame`)."""
    return rows_of(file_frame(spark, path, format, schema=schema, options=options))


def _check_delta(spark: SparkSession) -> None:
    if importlib.util.find_spec("delta") is None:
        raise SetupError("reading a delta sink needs delta-spark: pip install delta-spark")
    extensions = spark.conf.get("spark.sql.extensions", "") or ""
    if "DeltaSparkSessionExtension" not in extensions:
        raise SetupError(
            "reading a delta sink needs a SparkSession started with Delta's jars and "
            "extension, and this one was not: start it with "
            "kafka_spark_session(conf=delta_spark_conf()) (from kafkatest.sinks.delta), or "
            "override the spark_session fixture to do so; a running session cannot take them"
        )
