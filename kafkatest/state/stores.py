"""The state store a test's queries use, set for a block and put back after it.

transformWithState keeps its state in RocksDB only, and the state data source's change
feed reads RocksDB's changelog files; the session's default is the HDFS-backed store.
The setting is the session's, so a test that changed it and left it would change
what every later test's query does (which store, which files, which errors): this sets
it for the queries started inside the block and restores the session as it was, even
when the block fails. A query records the store in its checkpoint when it first
starts, and keeps it when restarted, inside the block or not.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from kafkatest.state.reader import CHANGELOG_CONF, ROCKSDB

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PROVIDER_CONF = "spark.sql.streaming.stateStore.providerClass"


@contextlib.contextmanager
def session_conf(spark: SparkSession, conf: Mapping[str, str]) -> Iterator[None]:
    """`conf` set on the session inside the block; each key put back (or unset) after."""
    before = {key: spark.conf.get(key, None) for key in conf}
    try:
        for key, value in conf.items():
            spark.conf.set(key, value)
        yield
    finally:
        for key, was in before.items():
            if was is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, was)


@contextlib.contextmanager
def rocksdb_state_store(spark: SparkSession, *, changelog: bool = True) -> Iterator[None]:
    """Queries started inside keep their state in RocksDB (what transformWithState
    needs), with changelog checkpointing (what ``read_state(..., changes_from=n)``
    reads) unless `changelog` is false."""
    conf = {PROVIDER_CONF: ROCKSDB}
    if changelog:
        conf[CHANGELOG_CONF] = "true"
    with session_conf(spark, conf):
        yield
