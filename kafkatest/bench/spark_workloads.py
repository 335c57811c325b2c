"""Spark's side of the benchmark: a typical streaming test, its in-memory twin, and
what starting Spark costs.

A streaming test's time is mostly Spark's, not the broker's; these figures show how
much the Kafka source and sink add to the same transformation over an in-memory
stream (`streaming_test_s` against `in_memory_streaming_s`), and what a test run pays
before its first query (`spark_start_s`, in a fresh process; warm, through a running
`kafkatest spark-server`).
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from kafkatest.bench.workloads import create_topic, kafka_source

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: Records in one streaming test: JSON orders for a handful of customers.
STREAMING_RECORDS = 10_000
CUSTOMERS = 20
#: Each streaming figure is the median of this many runs, after one warm-up run.
STREAMING_RUNS = 5
ORDER_SCHEMA = "order_id STRING, customer STRING, amount DOUBLE"


def orders(count: int = STREAMING_RECORDS) -> list[str]:
    return [
        json.dumps({"order_id": f"o-{i}", "customer": f"c-{i % CUSTOMERS}", "amount": i % 100})
        for i in range(count)
    ]


def totals_by_customer(parsed: DataFrame) -> DataFrame:
    """The transformation both streaming figures run: a parse already done, then a
    stateful aggregation, as a typical job's test does."""
    from pyspark.sql import functions as F

    return parsed.groupBy("customer").agg(
        F.sum("amount").alias("total"), F.count(F.lit(1)).alias("orders")
    )


def seed_orders(bootstrap: str, topic: str, count: int = STREAMING_RECORDS) -> None:
    from confluent_kafka import Producer

    create_topic(bootstrap, topic, partitions=2)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for index, value in enumerate(orders(count)):
        producer.produce(topic, value.encode(), key=f"o-{index}".encode())
    if producer.flush(60):
        raise RuntimeError("orders not acknowledged")


def kafka_streaming_test(spark: SparkSession, bootstrap: str, run: str) -> float:
    """Seconds for one AvailableNow query: Kafka source, parse, aggregate, Kafka sink."""
    from pyspark.sql import functions as F

    source, sink = f"bench-orders-{run}", f"bench-totals-{run}"
    seed_orders(bootstrap, source)
    create_topic(bootstrap, sink, partitions=1)
    with tempfile.TemporaryDirectory(prefix="kafkatest-bench-ckpt-") as checkpoint:
        started = time.perf_counter()
        parsed = (
            kafka_source(spark.readStream, bootstrap, source)
            .select(F.from_json(F.col("value").cast("string"), ORDER_SCHEMA).alias("o"))
            .select("o.*")
        )
        query = (
            totals_by_customer(parsed)
            .select(
                F.col("customer").alias("key"),
                F.to_json(F.struct("total", "orders")).alias("value"),
            )
            .writeStream.format("kafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("topic", sink)
            .option("checkpointLocation", checkpoint)
            .outputMode("update")
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        elapsed = time.perf_counter() - started
    if query.exception() is not None:
        raise RuntimeError(f"the streaming test failed: {query.exception()}")
    return elapsed


def in_memory_streaming_test(spark: SparkSession, run: str) -> float:
    """Seconds for the same query over a file stream into the memory sink."""
    with tempfile.TemporaryDirectory(prefix="kafkatest-bench-files-") as scratch:
        source = Path(scratch) / "orders"
        source.mkdir()
        (source / "part-0.json").write_text("\n".join(orders()) + "\n")
        started = time.perf_counter()
        parsed = spark.readStream.schema(ORDER_SCHEMA).json(str(source))
        query = (
            totals_by_customer(parsed)
            .writeStream.format("memory")
            .queryName(f"bench_totals_{run}")
            .option("checkpointLocation", str(Path(scratch) / "checkpoint"))
            .outputMode("update")
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        elapsed = time.perf_counter() - started
        rows = spark.sql(f"select count(*) from bench_totals_{run}").collect()[0][0]
    if rows != CUSTOMERS:
        raise RuntimeError(f"the in-memory test wrote {rows} totals, expected {CUSTOMERS}")
    return elapsed


def streaming_figures(
    spark: SparkSession, bootstrap: str, runs: int = STREAMING_RUNS
) -> dict[str, float]:
    """Medians of `runs` runs of each streaming test, after one warm-up each; the two
    alternate run by run, so a busy moment of a shared machine falls on both.

    Each round also runs both with Spark's default checkpoint manager (`*_default_
    checkpoints_s`), to show what kafkatest's choice of manager saves
    (`kafkatest/spark/checkpoints.py`)."""
    tag = str(time.monotonic_ns())
    kafka_streaming_test(spark, bootstrap, f"{tag}-warm")
    in_memory_streaming_test(spark, f"w{tag}")
    times: dict[str, list[float]] = {}
    for i in range(runs):
        for checkpoints, suffix in ((None, ""), ("default", "_default_checkpoints")):
            with _checkpoint_manager(spark, checkpoints):
                times.setdefault(f"streaming_test{suffix}_s", []).append(
                    kafka_streaming_test(spark, bootstrap, f"{tag}-{i}{suffix}")
                )
                times.setdefault(f"in_memory_streaming{suffix}_s", []).append(
                    in_memory_streaming_test(spark, f"m{tag}_{i}{suffix}")
                )
    return {key: round(statistics.median(values), 2) for key, values in times.items()}


@contextlib.contextmanager
def _checkpoint_manager(spark: SparkSession, which: str | None) -> Iterator[None]:
    """Spark's default checkpoint manager (FileContext) for the block, when `which` is
    "default"; the session's own (kafkatest's choice) otherwise."""
    from kafkatest.spark.checkpoints import CHECKPOINT_MANAGER_KEY, spark_default_manager

    ours = spark.conf.get(CHECKPOINT_MANAGER_KEY, None)
    if which != "default" or ours is None:
        yield
        return
    spark.conf.set(CHECKPOINT_MANAGER_KEY, spark_default_manager(ours))
    try:
        yield
    finally:
        spark.conf.set(CHECKPOINT_MANAGER_KEY, ours)


_SPARK_START = """
import json, sys, time
started = time.perf_counter()
remote = sys.argv[1] if len(sys.argv) > 1 else ""
if remote:
    from kafkatest.spark.connect import connect_spark_session
    spark = connect_spark_session(remote, send_connector=False)
else:
    from kafkatest.spark import kafka_spark_session
    spark = kafka_spark_session(app_name="kafkatest-bench-start")
spark.range(1).count()
elapsed = time.perf_counter() - started
jvm = getattr(spark, "_jvm", None)
pid = int(jvm.java.lang.ProcessHandle.current().pid()) if jvm is not None else None
print(json.dumps({"spark_start_s": elapsed, "jvm_pid": pid}))
"""


def spark_start(remote: str = "", env: dict[str, str] | None = None) -> float:
    """Seconds from a fresh interpreter to a SparkSession with the connector that has run
    one job: what each pytest run pays (cold), or pays to reach a warm server. `env`:
    variables set for the child (``KAFKATEST_SPARK_CDS``)."""
    return spark_start_and_jvm(remote, env)[0]


def spark_start_and_jvm(
    remote: str = "", env: dict[str, str] | None = None
) -> tuple[float, int | None]:
    """`spark_start`'s seconds and the pid of the driver JVM it started (None remote):
    the JVM outlives the child by the time it takes to exit, and to write its
    class-data-sharing archive when it was asked to."""
    done = _timed_run(
        [sys.executable, "-c", _SPARK_START, *([remote] if remote else [])],
        env={**os.environ, **(env or {})},
        timeout_s=600,
    )[1]
    if done.returncode != 0:
        raise RuntimeError(f"Spark did not start: {done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return float(result["spark_start_s"]), result["jvm_pid"]


def wait_for_exit(pid: int | None, timeout_s: float = 300.0) -> None:
    """Wait until process `pid` (not a child of this one) has gone."""
    deadline = time.monotonic() + timeout_s
    while pid is not None and Path(f"/proc/{pid}").exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"process {pid} still runs after {timeout_s} s")
        time.sleep(0.05)


#: Bare Spark, the floor of a cold start: no kafkatest, no connector; PySpark's defaults,
#: or (argv[1], JSON) the settings kafkatest's own session starts with.
_BARE_SPARK = """
import json, sys, time
from pyspark.sql import SparkSession
builder = SparkSession.builder.master("local[2]")
for key, value in json.loads(sys.argv[1]).items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
spark.createDataFrame([(1, "a"), (2, "b")], "n INT, s STRING").groupBy("s").count().collect()
print(json.dumps({"result_at": time.time()}))
"""


def bare_spark_cold(tuned: bool = False) -> float:
    """Seconds from starting a fresh Python process to the result of a tiny in-memory
    query on ``SparkSession.builder.master("local[2]")``: what a cold start costs
    without kafkatest. `tuned`: with the settings kafkatest's session starts with (UI
    off, two shuffle partitions...), the floor a like-for-like comparison needs; else
    PySpark's defaults. Timed from the parent (process start included), to the result
    (the JVM's exit is not waited for, as a pytest run does not)."""
    from kafkatest.spark.session import TEST_CONF

    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKATEST_")}
    settings = json.dumps(TEST_CONF if tuned else {})
    started = time.time()
    # In the temp directory, not the repository: nothing of kafkatest importable.
    command = [sys.executable, "-c", _BARE_SPARK, settings]
    done = _timed_run(command, tempfile.gettempdir(), env=env, timeout_s=600)[1]
    if done.returncode != 0:
        raise RuntimeError(f"bare Spark did not start: {done.stderr[-2000:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["result_at"]) - started


def pytest_start() -> float:
    """Seconds for a fresh ``python -m pytest --collect-only -q`` over an empty
    directory, with kafkatest's plugin loaded as installed: pytest's own start, which
    any cold test run pays before kafkatest starts anything (exit status 5: nothing
    collected)."""
    with tempfile.TemporaryDirectory(prefix="kafkatest-pytest-start-") as folder:
        elapsed, done = _timed_run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
            folder,
            timeout_s=300,
        )
    if done.returncode not in (0, 5):
        raise RuntimeError(f"pytest did not start: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    return elapsed


#: One streaming test as a downstream repository writes it: seed a topic, run an
#: AvailableNow query from Kafka to Kafka, assert on what the sink holds.
_ONE_STREAMING_TEST = """
from kafkatest import Record


def test_one_stream(spark, kafka_broker, kafka_topic, checkpoint_dir):
    source, sink = kafka_topic(partitions=2), kafka_topic()
    kafka_broker.produce(Record.make(source, {"n": i}, key=str(i)) for i in range(100))
    query = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("key", "value")
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
        .option("topic", sink)
        .option("checkpointLocation", str(checkpoint_dir))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    assert len(kafka_broker.consume(sink)) == 100
"""


def pytest_rerun(
    *pytest_args: str,
    bytecode: bool = True,
    env_vars: dict[str, str] | None = None,
    forked: bool = False,
) -> float:
    """Seconds from `python -m pytest` to its result for one streaming test on the
    emulator, in a fresh directory (no conftest, the repository's options unused): what
    re-running one test costs a user. `pytest_args` add options (`--spark-remote=off`).

    `bytecode`: Python may cache compiled modules, as on a developer's machine. With
    PYTHONDONTWRITEBYTECODE set (some CI sandboxes set it) every run compiles the
    modules that have no cached bytecode (an editable install's) and pytest re-does its
    assertion rewriting of every plugin module; False keeps the variable as it is.
    `env_vars`: variables set for the run (where the class-data-sharing archive is).
    `forked`: through `kafkatest pytest`, a child of its fork server."""
    env = {**os.environ, **(env_vars or {})}
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory(prefix="kafkatest-rerun-") as folder:
        (Path(folder) / "test_one_stream.py").write_text(_ONE_STREAMING_TEST)
        runner = ["-m", "kafkatest.cli", "pytest"] if forked else ["-m", "pytest"]
        command = [sys.executable, *runner, "-q", "-p", "no:cacheprovider"]
        elapsed, done = _timed_run(
            [*command, "--kafka-backend=emulator", *pytest_args, "test_one_stream.py"],
            folder,
            env=env,
            timeout_s=600,
        )
    if done.returncode != 0:
        raise RuntimeError(f"the re-run test failed: {done.stdout[-3000:]}")
    return elapsed


def _timed_run(
    command: list[str],
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    timeout_s: float = 300,
) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Seconds `command` took (in `cwd`), and how it ended (its output captured)."""
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s, check=False
    )
    return time.perf_counter() - started, done
