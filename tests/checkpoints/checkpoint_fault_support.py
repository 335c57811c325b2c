"""A stateful job, its two runs around a checkpoint fault, and what the second run did.

The job deduplicates payments by id (state in the checkpoint) and writes them to a Kafka
topic (the at-least-once sink). The first run reads payments 0-8 in three batches of
three; payments 9-11 are seeded before the fault, so the restarted query has one batch
of its own to run. What it then writes to a fresh sink topic shows what the fault did:
the new batch only (nothing), earlier batches again (a replay), or an error.
"""

from __future__ import annotations

import contextlib
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession, functions as F
from pyspark.sql.streaming import StreamingQuery

from kafkatest.assertions import query_failure
from kafkatest.brokers.base import Broker
from kafkatest.oracles import read_topic
from kafkatest.seeding import seed
from kafkatest.spark import wait_for_query

SCHEMA = "payment_id STRING, amount DOUBLE"
PROVIDER = "spark.sql.streaming.stateStore.providerClass"
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
BATCH = 3


def payments(first: int, count: int) -> list[dict[str, Any]]:
    return [{"payment_id": f"p{n:02d}", "amount": float(n)} for n in range(first, first + count)]


def start_dedup(
    spark: SparkSession, bootstrap: str, source: str, sink: str, checkpoint: Path
) -> StreamingQuery:
    """Payments deduplicated by id (state kept across batches), to the topic `sink`."""
    parsed = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(BATCH))
        .load()
        .select(F.from_json(F.col("value").cast("string"), SCHEMA).alias("p"))
        .select("p.*")
        .dropDuplicates(["payment_id"])
    )
    return (
        parsed.select(F.col("payment_id").alias("key"), F.to_json(F.struct("*")).alias("value"))
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", sink)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )


@contextlib.contextmanager
def state_provider(spark: SparkSession, provider: str | None) -> Iterator[None]:
    """The state store provider for queries started inside (restored after)."""
    before = spark.conf.get(PROVIDER, None)
    if provider:
        spark.conf.set(PROVIDER, provider)
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(PROVIDER)
        else:
            spark.conf.set(PROVIDER, before)


@dataclass(frozen=True)
class Outcome:
    """What the restarted query did: its error, whether its id changed, what it wrote."""

    error: str | None
    new_query_id: bool
    #: Payment numbers the restarted query wrote to its sink, as ranges ("6-11").
    wrote: str
    #: The sink may hold any part of `wrote`: tasks of a failed batch that raced its abort.
    partial: bool = False

    def matches(self, seen: Outcome) -> bool:
        """Whether `seen` is this expected outcome (a partial write any subset of it)."""
        if (self.error, self.new_query_id) != (seen.error, seen.new_query_id):
            return False
        if not self.partial:
            return self.wrote == seen.wrote
        return set(numbers(seen.wrote)) <= set(numbers(self.wrote))

    def __str__(self) -> str:
        wrote = f"{'part of ' if self.partial else ''}{self.wrote or '-'}"
        return f"error={self.error} new_query_id={self.new_query_id} wrote={wrote}"


def numbers(text: str) -> list[int]:
    """The payment numbers of a `ranges` text (copies once)."""
    out: list[int] = []
    for part in filter(None, text.split(",")):
        first, _, last = part.split("x")[0].partition("-")
        out += range(int(first), int(last or first) + 1)
    return out


def ranges(numbers: list[int]) -> str:
    """``[0, 1, 2, 6, 6]`` as ``"0-2,6x2"``: runs of payment numbers, repeats counted."""
    counts = Counter(numbers)
    parts: list[str] = []
    run: list[int] = []
    for n in sorted(counts):
        if run and (n != run[-1] + 1 or counts[n] != counts[run[0]]):
            parts.append(_run_text(run, counts[run[0]]))
            run = []
        run.append(n)
    if run:
        parts.append(_run_text(run, counts[run[0]]))
    return ",".join(parts)


def _run_text(run: list[int], copies: int) -> str:
    text = str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}"
    return text if copies == 1 else f"{text}x{copies}"


class FaultBench:
    """One first run per state store provider, then a restart per fault on a copy of it."""

    def __init__(self, spark: SparkSession, broker: Broker, tmp: Path, name: str) -> None:
        self.spark = spark
        self.broker = broker
        self.tmp = tmp
        self.name = name
        self.source = f"{name}-in"
        broker.create_topic(self.source, partitions=1)
        seed(broker, self.source, payments(0, 9))
        self.query_ids: dict[str, str] = {}
        self._restarts = 0
        self._sinks = 0

    def first_run(self, provider: str | None, label: str) -> Path:
        checkpoint = self.tmp / f"first-{label}"
        sink = f"{self.name}-first-{label}"
        with state_provider(self.spark, provider):
            query = start_dedup(
                self.spark, self.broker.bootstrap_servers, self.source, sink, checkpoint
            )
            wait_for_query(query, timeout_s=600)
        self.query_ids[label] = str(query.id)
        return checkpoint

    def add_new_payments(self) -> None:
        seed(self.broker, self.source, payments(9, 3))

    def copy(self, checkpoint: Path) -> Path:
        self._restarts += 1
        target = self.tmp / f"restart-{self._restarts}"
        shutil.copytree(checkpoint, target)
        return target

    def restart(self, checkpoint: Path, label: str) -> tuple[Outcome, list[Any]]:
        """Run the job again on `checkpoint`: what it did, and its batches' progress."""
        self._sinks += 1
        sink = f"{self.name}-restart-{self._sinks}"
        self.broker.create_topic(sink, partitions=1)
        query = None
        error: str | None = None
        try:
            query = start_dedup(
                self.spark, self.broker.bootstrap_servers, self.source, sink, checkpoint
            )
            wait_for_query(query, timeout_s=600)
        except Exception as exc:  # the fault's effect, recorded in the outcome
            error = _error_name(exc)
        wrote = [int(row["key"][1:]) for row in read_topic(self.broker, sink)]
        new_id = query is not None and str(query.id) != self.query_ids[label]
        progress = list(query.recentProgress) if query is not None else []
        return Outcome(error, new_id, ranges(wrote)), progress


def _error_name(exc: BaseException) -> str:
    failure = query_failure(exc)
    if failure is None:
        return type(exc).__name__
    conditions = [c for c in failure.conditions if c != "STREAM_FAILED"]
    if conditions:
        return conditions[0]
    return (
        failure.causes[-1].split(":")[0].rsplit(".", 1)[-1]
        if failure.causes
        else failure.headline[:80]
    )
