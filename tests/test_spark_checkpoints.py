"""The session writes streaming checkpoints through Hadoop's FileSystem API, which
renames without running `readlink` in a process per file, and writes the same
checkpoint that Spark's default manager writes (`kafkatest/spark/checkpoints.py`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from kafkatest.spark.checkpoints import (
    CHECKPOINT_MANAGER_KEY,
    FILESYSTEM_CHECKPOINT_MANAGERS,
    _filesystem_checkpoint_manager,
    checkpoint_conf,
    spark_default_manager,
)
from kafkatest.spark.connect import is_connect_session


def _jvm(spark: Any) -> Any:
    if is_connect_session(spark):
        pytest.skip("reads the session's Hadoop settings through py4j, which Spark Connect has not")
    return spark._jvm


def _manager_for(spark: Any, directory: Path) -> Any:
    """The checkpoint manager Spark's streaming code gets for `directory` in this session."""
    jvm = _jvm(spark)
    package = checkpoint_conf()[CHECKPOINT_MANAGER_KEY].rsplit(".", 1)[0]
    factory = jvm
    for name in f"{package}.CheckpointFileManager".split("."):
        factory = getattr(factory, name)
    hadoop_conf = spark._jsparkSession.sessionState().newHadoopConf()
    return factory.create(jvm.org.apache.hadoop.fs.Path(directory.as_uri()), hadoop_conf)


def test_the_installed_spark_has_the_manager() -> None:
    assert checkpoint_conf()[CHECKPOINT_MANAGER_KEY] in FILESYSTEM_CHECKPOINT_MANAGERS


def test_a_spark_without_jars_keeps_its_default(tmp_path: Path) -> None:
    assert _filesystem_checkpoint_manager(tmp_path) is None
    assert _filesystem_checkpoint_manager(None) is None


def test_streaming_code_gets_the_filesystem_manager(spark: Any, tmp_path: Path) -> None:
    manager = _manager_for(spark, tmp_path)
    assert manager.getClass().getName() == checkpoint_conf()[CHECKPOINT_MANAGER_KEY]


def test_a_batch_file_written_twice_fails_as_spark_default_does(spark: Any, tmp_path: Path) -> None:
    """Two queries on one checkpoint: the second writer of a batch's file is refused."""
    manager = _manager_for(spark, tmp_path)
    batch_file = _jvm(spark).org.apache.hadoop.fs.Path((tmp_path / "0").as_uri())
    first = manager.createAtomic(batch_file, False)
    first.write(1)
    first.close()
    second = manager.createAtomic(batch_file, False)
    second.write(2)
    with pytest.raises(Exception, match="FileAlreadyExistsException"):
        second.close()
    assert (tmp_path / "0").read_bytes() == b"\x01"


def _checkpoint_files(spark: Any, scratch: Path, name: str) -> set[str]:
    """The files one AvailableNow query over a file stream leaves in its checkpoint."""
    source = scratch / f"{name}-in"
    source.mkdir()
    (source / "part-0.json").write_text('{"k": "a", "n": 1}\n{"k": "b", "n": 2}\n')
    checkpoint = scratch / f"{name}-checkpoint"
    query = (
        spark.readStream.schema("k STRING, n INT")
        .json(str(source))
        .groupBy("k")
        .count()
        .writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(checkpoint))
        .outputMode("update")
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None
    return {
        str(Path(root, file).relative_to(checkpoint))
        for root, _, files in os.walk(checkpoint)
        for file in files
    }


def test_the_checkpoint_holds_what_spark_default_writes(spark: Any, tmp_path: Path) -> None:
    ours = _checkpoint_files(spark, tmp_path, "checkpoint_ours")
    default = spark_default_manager(checkpoint_conf()[CHECKPOINT_MANAGER_KEY])
    spark.conf.set(CHECKPOINT_MANAGER_KEY, default)
    try:
        defaults = _checkpoint_files(spark, tmp_path, "checkpoint_default")
    finally:
        spark.conf.set(CHECKPOINT_MANAGER_KEY, checkpoint_conf()[CHECKPOINT_MANAGER_KEY])
    assert ours == defaults
    assert {"offsets/0", "offsets/.0.crc", "commits/0", "metadata"} <= ours
