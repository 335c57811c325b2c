"""Real-Time Mode (PySpark 4.1+): what a test must know before the query starts.

`writeStream.trigger(realTime="5 seconds")` runs a query as long-running tasks, one per
source partition, that hold their task slots for the whole batch (at least 5 s,
`spark.sql.streaming.realTimeMode.minBatchDuration`) and emit each record as it comes;
from Spark 4.3 a stateful query (dedup, aggregation) also holds its shuffle partitions'
tasks at once. Kafka is its only source, `update` its only output mode, and the Kafka
sink stays at-least-once. A session with fewer task slots than those tasks starts the
query all the same: Spark runs the tasks it can place and the rest wait, so records of
the partitions left out arrive a batch late or never, and a test waiting for them
reads as a slow machine. `check_real_time_slots` says so before the query starts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kafkatest.errors import SetupError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from kafkatest.brokers.client import ClientOperations

#: The first PySpark line with Real-Time Mode (SPARK-53736).
FIRST_LINE = (4, 1)

_LOCAL = re.compile(r"local(?:\[(\d+|\*)(?:,\d+)?\])?$")
_LOCAL_CLUSTER = re.compile(r"local-cluster\[(\d+),\s*(\d+),\s*\d+\]$")


def supports_real_time() -> bool:
    """Whether the installed PySpark has Real-Time Mode (4.1 and later)."""
    from kafkatest.jars.coordinates import installed_spark

    return installed_spark().minor_line >= FIRST_LINE


def task_slots(spark: SparkSession) -> int | None:
    """How many tasks `spark` runs at once, or None when it cannot tell.

    A classic session asks its scheduler (the slots barrier stages are checked
    against, counted over the executors that have registered); a Spark Connect
    session reads its master: ``local[N]`` runs N tasks, ``local-cluster[W,C,M]``
    W times C.
    """
    from kafkatest.spark.connect import is_connect_session

    if not is_connect_session(spark):
        try:
            scala = spark.sparkContext._jsc.sc()
            profile = scala.resourceProfileManager().defaultResourceProfile()
            return int(scala.maxNumConcurrentTasks(profile))
        except Exception:  # Spark-internal: another line may lack it; the master tells
            pass
    try:
        master = spark.conf.get("spark.master")
    except Exception:  # a Connect server that hides its static conf
        return None
    return slots_of_master(master or "")


def slots_of_master(master: str) -> int | None:
    """Task slots of a local master URL; None for a cluster's (they come and go)."""
    import os

    local = _LOCAL.match(master)
    if local:
        threads = local.group(1)
        if threads is None:
            return 1
        return (os.cpu_count() or 1) if threads == "*" else int(threads)
    cluster = _LOCAL_CLUSTER.match(master)
    if cluster:
        return int(cluster.group(1)) * int(cluster.group(2))
    return None


def check_real_time_slots(
    spark: SparkSession,
    broker: ClientOperations,
    topics: str | Iterable[str],
    *,
    shuffle_partitions: int = 0,
) -> int:
    """Raise `SetupError` when `spark` has fewer task slots than a Real-Time Mode query
    reading `topics` needs; return how many it needs.

    The query needs one slot per partition of each topic it reads, plus
    `shuffle_partitions` for a stateful query on Spark 4.3 (its shuffle's tasks run at
    the same time as the readers: give ``spark.sql.shuffle.partitions``). Call it
    before ``start()``: the query itself would start and then wait.
    """
    names = [topics] if isinstance(topics, str) else list(topics)
    partitions = {topic: len(broker.latest_offsets(topic)) for topic in names}
    needed = sum(partitions.values()) + shuffle_partitions
    slots = task_slots(spark)
    if slots is not None and slots < needed:
        sources = ", ".join(f"{topic!r} has {count}" for topic, count in partitions.items())
        shuffle = f", plus {shuffle_partitions} shuffle partitions" if shuffle_partitions else ""
        raise SetupError(
            f"Real-Time Mode runs one task per source partition for the whole batch "
            f"({sources}{shuffle}: {needed} tasks at once), and this Spark session runs "
            f"{slots} at a time: the query would start and the records of the partitions "
            f"left waiting would arrive late or never. Give Spark at least {needed} task "
            f"slots (--spark-master=local[{needed}], or kafka_spark_session(master="
            f"'local[{needed}]')), or read a topic with at most {slots - shuffle_partitions} "
            "partitions."
        )
    return needed
