"""What a run left in its sink, read back as plain rows that can be compared.

The oracles compare runs of one job, so a sink row must hold only what the job
computed: a topic's partition, offset and write timestamp differ between two runs
of a correct job and are left out (key and value stay, the value JSON-parsed); a
directory is read with the format its files have, honouring a file sink's
``_spark_metadata`` log so that only committed files count.

How a sink holds a result depends on the output mode. In append mode every row is
the result. In update and complete mode a topic holds each batch's changes (or whole
result): the table it represents is the last value per Kafka key, a tombstone
deleting it, which is how a downstream reader of a compacted topic sees it. A memory
table in complete mode holds its last batch's result; in update mode every update,
reduced here to the last per state key.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafkatest.brokers.client import ClientOperations
from kafkatest.oracles.options import SinkReader

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: File suffixes each format's writer gives its data files (compressed ones too).
_SUFFIXES = {
    "parquet": (".parquet",),
    "json": (".json", ".json.gz", ".json.snappy", ".json.bz2", ".json.deflate"),
    "csv": (".csv", ".csv.gz", ".csv.snappy", ".csv.bz2", ".csv.deflate"),
}


class SinkShapeError(ValueError):
    """A sink cannot be read the way its output mode needs (rows without keys)."""


def read_topic(broker: ClientOperations, topic: str) -> list[dict[str, Any]]:
    """The sink topic's records as ``{"key", "value"}`` rows (key text, value JSON-parsed),
    in the order they were written (a sink topic of the oracles has one partition)."""
    from kafkatest.sinks import topic_rows

    return [{"key": row["key"], "value": row["value"]} for row in topic_rows(broker, topic)]


def as_table(
    rows: Sequence[dict[str, Any]], keys: Sequence[str] = ("key",)
) -> list[dict[str, Any]]:
    """The table a stream of changes represents: the last row per key, in write order;
    a row whose value is None (a tombstone) deletes its key."""
    table: dict[tuple[Any, ...], dict[str, Any]] = {}
    keyless = 0
    for row in rows:
        key = tuple(_hashable(row.get(name)) for name in keys)
        if all(part is None for part in key):
            keyless += 1
            continue
        if set(row) - set(keys) == {"value"} and row.get("value") is None:
            table.pop(key, None)
        else:
            table.pop(key, None)  # a later write moves the key to the end
            table[key] = row
    if keyless:
        raise SinkShapeError(
            f"{keyless} of {len(rows)} rows have no {' or '.join(keys)}: a sink in update or "
            "complete mode is read as a table keyed by it. Write the grouping column as the "
            "Kafka key (select it AS key), or give read_sink="
        )
    return list(table.values())


def read_memory(spark: SparkSession, name: str) -> list[dict[str, Any]]:
    """The rows a memory sink's table holds (``spark.table(name)``)."""
    from kafkatest.sinks import memory_rows

    return memory_rows(spark, name)


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
    """The reader for a ``"topic"``, ``"path"`` or ``"memory"`` sink when the caller gives none."""
    if sink == "topic":
        return lambda topic: read_topic(broker, topic)
    if spark is None:
        raise ValueError(f'sink="{sink}" is read with Spark: pass spark=, or read_sink=')
    session = spark
    if sink == "memory":
        return lambda name: read_memory(session, name)
    return lambda path: read_directory(session, path)


def _hashable(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    return value
