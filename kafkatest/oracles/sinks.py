"""What a run left in its sink, read back as plain rows that can be compared.

The oracles compare runs of one job, so a sink row must hold only what the job
computed: a topic's partition, offset and write timestamp differ between two runs
of a correct job and are left out (key and value stay, the value JSON-parsed); a
directory is read with the format its files have, honouring a file sink's
``_spark_metadata`` log so that only committed files count.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafkatest.brokers.client import ClientOperations

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: ``read_sink(sink) -> rows``: `sink` is the run's sink topic name or directory path.
SinkReader = Callable[[str], list[dict[str, Any]]]

SINKS = ("topic", "path")
#: File suffixes each format's writer gives its data files (compressed ones too).
_SUFFIXES = {
    "parquet": (".parquet",),
    "json": (".json", ".json.gz", ".json.snappy", ".json.bz2", ".json.deflate"),
    "csv": (".csv", ".csv.gz", ".csv.snappy", ".csv.bz2", ".csv.deflate"),
}


def read_topic(broker: ClientOperations, topic: str) -> list[dict[str, Any]]:
    """The sink topic's records as ``{"key", "value"}`` rows (key text, value JSON-parsed)."""
    from kafkatest.sinks import topic_rows

    return [{"key": row["key"], "value": row["value"]} for row in topic_rows(broker, topic)]


def data_files(root: Path) -> list[Path]:
    """Data files below `root`, skipping what Spark skips (``_`` and ``.`` names)."""
    out = []
    for path in sorted(root.rglob("*")):
        parts = path.relative_to(root).parts
        if path.is_file() and not any(p.startswith(("_", ".")) for p in parts):
            out.append(path)
    return out


def file_format(root: Path) -> str | None:
    """The format of a directory's files: delta, parquet, json or csv (None: no data)."""
    if (root / "_delta_log").is_dir():
        return "delta"
    for path in data_files(root):
        for fmt, suffixes in _SUFFIXES.items():
            if path.name.endswith(suffixes):
                return fmt
    return None


def read_directory(spark: SparkSession, path: str | Path) -> list[dict[str, Any]]:
    """Every row of a directory of parquet, JSON, CSV (with a header row) or Delta files.

    A file sink's directory is read through its ``_spark_metadata`` log; files a
    ``foreachBatch`` wrote into nested directories are read recursively (Hive-style
    ``name=value`` directories become a column, as Spark reads them).
    """
    from kafkatest.sinks.files import file_rows

    root = Path(path)
    fmt = file_format(root) if root.is_dir() else None
    if fmt is None:
        return []
    if fmt == "delta" or (root / "_spark_metadata").is_dir():
        return file_rows(spark, root, fmt)
    nested = [p.parent for p in data_files(root) if p.parent != root]
    hive_style = all("=" in d.name for d in nested)
    options = {} if hive_style else {"recursiveFileLookup": "true"}
    return file_rows(spark, root, fmt, options=options)


def default_reader(sink: str, broker: ClientOperations, spark: SparkSession | None) -> SinkReader:
    """The reader for a ``"topic"`` or ``"path"`` sink when the caller gives none."""
    if sink == "topic":
        return lambda topic: read_topic(broker, topic)
    if spark is None:
        raise ValueError('sink="path" is read with Spark: pass spark=, or read_sink=')
    session = spark
    return lambda path: read_directory(session, path)
