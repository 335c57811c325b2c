"""What changed between Spark lines that a test sees, held on each line the suite runs on
(the default 4.2 and `nox -s spark35`, `spark40`, `spark43`).

Spark 4.1 turned adaptive query execution on for stateless streaming queries
(`spark.sql.adaptive.streaming.stateless.enabled`, under `spark.sql.adaptive.enabled`):
AQE may coalesce a stateless query's shuffle, so the files a batch writes differ from
4.0's. kafkatest's session turns AQE off, so a job's output is partitioned the same on
every line; a user who turns it on gets the line's own behaviour.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyspark
from pyspark.sql import functions as F

from kafkatest import seed
from kafkatest.spark import wait_for_query

#: Keys that land in both of the session's 2 shuffle partitions.
KEYS = [f"k{i}" for i in range(8)]


def _files_of_one_batch(spark, broker, topic: str, out: Path, checkpoint: Path) -> int:
    frame = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", broker.bootstrap_servers)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .select(F.col("key").cast("string").alias("key"))
        .repartition("key")  # a stateless shuffle: spark.sql.shuffle.partitions (2) parts
    )
    query = (
        frame.writeStream.format("json")
        .option("path", str(out))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    wait_for_query(query)
    files = list(out.glob("part-*.json"))
    assert sum(len(f.read_text().splitlines()) for f in files) == len(KEYS)
    assert {json.loads(line)["key"] for f in files for line in f.read_text().splitlines()} == set(
        KEYS
    )
    return len(files)


def test_a_stateless_shuffle_is_not_adaptive_in_kafkatests_session(
    spark, kafka_broker, kafka_topic, tmp_path
) -> None:
    topic = kafka_topic(partitions=1)
    seed(kafka_broker, topic, [{"key": key, "value": {"n": 1}} for key in KEYS])
    assert spark.conf.get("spark.sql.adaptive.enabled") == "false"
    assert _files_of_one_batch(spark, kafka_broker, topic, tmp_path / "a", tmp_path / "ca") == 2
    spark.conf.set("spark.sql.adaptive.enabled", "true")  # what a user's own conf may do
    try:
        adaptive = _files_of_one_batch(spark, kafka_broker, topic, tmp_path / "b", tmp_path / "cb")
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", "false")
    line = tuple(int(part) for part in pyspark.__version__.split(".")[:2])
    # 4.1+ coalesces the tiny shuffle into one partition; before 4.1 streaming never did.
    assert adaptive == (1 if line >= (4, 1) else 2)
