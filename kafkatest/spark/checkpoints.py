"""Where Spark's streaming checkpoints cost a process per file, and the setting that
stops it.

pip's PySpark ships no Hadoop native library. Without it, Hadoop's FileContext API,
Spark's default for checkpoint files on the local disk, asks a rename's source and
target for their link status by running `readlink` in a new process, twice per rename
(JDK Flight Recorder, one AvailableNow query: about 64 `readlink` processes for the
offset and commit logs, the metadata and the state store's delta files, with their
`.crc` files). Hadoop's FileSystem API renames the same files with one `rename(2)`.
Spark's own FileSystem-based checkpoint manager uses it: the same files, the same
`.crc` files, and the same `FileAlreadyExistsException` when a batch's file is already
there (two queries writing one checkpoint), because both check the target before they
rename. On HDFS both managers' renames are atomic as well.

Measured (the two managers alternating for eight rounds in one session, 2026-11-27,
`BENCHMARKS.md`, "Checkpoint files: a process per file"): a streaming test over Kafka 0.72 s → 0.55 s, the
same query over a file stream 0.68 s → 0.39 s.

Hadoop still runs `chmod` in a process for each file it creates (about 27 per query);
no setting avoids those without the native library.
"""

from __future__ import annotations

import functools
import zipfile
from pathlib import Path

#: Spark's conf naming the class that writes checkpoint files (read for every query).
CHECKPOINT_MANAGER_KEY = "spark.sql.streaming.checkpointFileManagerClass"

#: Spark's FileSystem-based checkpoint manager: 4.2 keeps it in a subpackage, 3.5 and 4.0 not.
FILESYSTEM_CHECKPOINT_MANAGERS = (
    "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager",
    "org.apache.spark.sql.execution.streaming.FileSystemBasedCheckpointFileManager",
)


def checkpoint_conf() -> dict[str, str]:
    """The setting that writes checkpoints through FileSystem, for the installed Spark.

    Empty when its jars are not where PySpark keeps them (a client-only install): Spark
    then keeps its default, which is slower but correct.
    """
    manager = _filesystem_checkpoint_manager(_spark_jars_dir())
    return {CHECKPOINT_MANAGER_KEY: manager} if manager else {}


def spark_default_manager(manager: str) -> str:
    """Spark's own default (FileContext-based) manager, from the same package as `manager`."""
    return manager.replace("FileSystemBased", "FileContextBased")


def _spark_jars_dir() -> Path | None:
    try:
        from pyspark.find_spark_home import _find_spark_home
    except ImportError:
        return None
    try:
        return Path(_find_spark_home()) / "jars"
    except (SystemExit, OSError):  # PySpark exits when it finds no Spark home
        return None


@functools.cache
def _filesystem_checkpoint_manager(jars: Path | None) -> str | None:
    """The manager's class name in the spark-sql jar under `jars`, or None."""
    if jars is None:
        return None
    for jar in sorted(jars.glob("spark-sql_*.jar")):
        try:
            with zipfile.ZipFile(jar) as archive:
                names = set(archive.namelist())
        except (OSError, zipfile.BadZipFile):
            continue
        for manager in FILESYSTEM_CHECKPOINT_MANAGERS:
            if manager.replace(".", "/") + ".class" in names:
                return manager
    return None
