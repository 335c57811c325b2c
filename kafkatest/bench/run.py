"""Run every workload against each broker in one process and write the figures.

The emulator is measured as a separate process (`kafkatest emulator`), like the
Kafka JVM, so that its memory can be read and the clients' Python work does not
share its interpreter; its in-process start-up (what fixtures pay) is timed apart.
Produce and consume run with both brokers up, taking turns round by round (the
broker whose turn it is not is paused); then each broker, started afresh, runs its
group and Spark workloads alone.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafkatest.bench import spark_workloads, workloads
from kafkatest.bench.oracles import oracle_figures_on
from kafkatest.bench.processes import (
    alone,
    bench_broker,
    in_process_emulator_startup,
    one_core,
    running,
)
from kafkatest.bench.spark_start import spark_start_figures
from kafkatest.brokers.capabilities import Capability
from kafkatest.brokers.process import rss_mb
from kafkatest.brokers.registry import capabilities_of
from kafkatest.spark.session import release_kafka_clients


def machine() -> dict[str, Any]:
    memory = Path("/proc/meminfo").read_text().split()[1]
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(int(memory) / 1024 / 1024, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


#: Joins timed per broker for `group_join_s` (their median).
GROUP_JOINS = 9
#: A join slower than this had a member wait for a heartbeat: the group split.
SPLIT_JOIN_S = 1.0


def client_figures(
    rates: workloads.ClientRates, records: int, log: Callable[[str], None]
) -> dict[str, float]:
    """The throughput of one broker's turns, the client's CPU beside it, and the
    broker's own CPU per million records (the figure the target is set on: the
    throughput is bound by the client's CPU on either broker)."""
    figures: dict[str, float] = {
        "produce_records_per_s": round(rates.produce),
        "produce_client_cpu_s": round(rates.produce_client_cpu_s, 3),
        "consume_records_per_s": round(rates.consume),
        "consume_client_cpu_s": round(rates.consume_client_cpu_s, 3),
    }
    log(
        f"  produce: {figures['produce_records_per_s']:,} records/s "
        f"(the client's own CPU: {figures['produce_client_cpu_s']} s a run)"
    )
    log(
        f"  consume: {figures['consume_records_per_s']:,} records/s "
        f"(the client's own CPU: {figures['consume_client_cpu_s']} s a run)"
    )
    broker_cpu = rates.produce_broker_cpu_s + rates.consume_broker_cpu_s
    if broker_cpu == broker_cpu:  # not NaN: the broker's process was known
        per_mrec = 1_000_000 / records
        figures["broker_cpu_per_mrec_s"] = round(broker_cpu * per_mrec, 3)
        figures["broker_produce_cpu_per_mrec_s"] = round(rates.produce_broker_cpu_s * per_mrec, 3)
        figures["broker_consume_cpu_per_mrec_s"] = round(rates.consume_broker_cpu_s * per_mrec, 3)
        figures["client_cpu_per_mrec_s"] = round(
            (rates.produce_client_cpu_s + rates.consume_client_cpu_s) * per_mrec, 3
        )
        log(
            f"  the broker's own CPU per 1M records produced and consumed: "
            f"{figures['broker_cpu_per_mrec_s']} s (produce "
            f"{figures['broker_produce_cpu_per_mrec_s']} s, consume "
            f"{figures['broker_consume_cpu_per_mrec_s']} s; the clients' "
            f"{figures['client_cpu_per_mrec_s']} s)"
        )
    return figures


def measure(
    broker: Any,
    spark: Any,
    records: int,
    spark_records: int,
    log: Callable[[str], None],
    streaming_runs: int = spark_workloads.STREAMING_RUNS,
) -> dict[str, float]:
    """The workloads a running broker runs with no other broker up: group joins, the
    Spark read and the streaming tests."""
    try:
        figures: dict[str, float] = {}
        bootstrap = broker.bootstrap_servers
        # Four partitions for the joins, and records to warm the connector up with.
        workloads.create_topic(bootstrap, "bench")
        workloads.produce(bootstrap, "bench", records)
        # A group that splits (a member joins after the first generation formed) waits
        # for the next heartbeat, seconds, on either broker: one join is a lottery.
        joins = [workloads.group_join(bootstrap, "bench") for _ in range(GROUP_JOINS)]
        figures["group_join_s"] = round(statistics.median(joins), 3)
        figures["group_join_max_s"] = round(max(joins), 3)
        # Splits make the distribution two-humped: the mean is what a suite pays.
        figures["group_join_mean_s"] = round(statistics.mean(joins), 3)
        figures["group_join_splits"] = sum(join > SPLIT_JOIN_S for join in joins)
        log(
            f"  four consumers each holding a partition: {figures['group_join_s']} s "
            f"(median of {GROUP_JOINS}; mean {figures['group_join_mean_s']} s; "
            f"{figures['group_join_splits']} split, slowest {figures['group_join_max_s']} s)"
        )
        workloads.create_topic(bootstrap, "bench-spark")
        workloads.produce(bootstrap, "bench-spark", spark_records)
        workloads.spark_read(spark, bootstrap, "bench", records)  # warm the connector up
        figures["spark_read_s"] = round(
            workloads.spark_read(spark, bootstrap, "bench-spark", spark_records), 2
        )
        log(f"  spark read of {spark_records:,}: {figures['spark_read_s']} s")
        figures.update(spark_workloads.streaming_figures(spark, bootstrap, streaming_runs))
        figures["streaming_over_in_memory"] = round(
            figures["streaming_test_s"] / figures["in_memory_streaming_s"], 2
        )
        log(
            f"  streaming test: {figures['streaming_test_s']} s "
            f"(in-memory stream: {figures['in_memory_streaming_s']} s; with Spark's default "
            f"checkpoint manager {figures['streaming_test_default_checkpoints_s']} s and "
            f"{figures['in_memory_streaming_default_checkpoints_s']} s)"
        )
        figures["rss_mb"] = rss_mb(broker.pid)
        log(f"  rss: {figures['rss_mb']} MB")
        return figures
    finally:
        # The connector's cached producers would otherwise go on reconnecting to the
        # stopped broker, a warning a second, through the other broker's figures.
        release_kafka_clients()


def measure_contended(
    brokers: dict[str, Any], records: int, log: Callable[[str], None]
) -> dict[str, dict[str, float]]:
    """Produce and consume with the brokers and the clients on one core, the brokers
    taking turns as in the main run."""
    with one_core(), running(brokers):
        rates = workloads.produce_and_consume_rates(
            {name: broker.bootstrap_servers for name, broker in brokers.items()},
            "bench-contended",
            records,
            turn=lambda name: alone(brokers, name),
        )
    figures: dict[str, dict[str, float]] = {}
    for name, rate in rates.items():
        figures[name] = {
            "one_core_produce_records_per_s": round(rate.produce),
            "one_core_consume_records_per_s": round(rate.consume),
        }
        log(f"{name} on one core: produce {rate.produce:,.0f}/s, consume {rate.consume:,.0f}/s")
    return figures


def run_bench(
    output: Path | None,
    records: int = 200_000,
    spark_records: int = 1_000_000,
    backends: tuple[str, ...] = ("emulator", "kafka"),
    contention: bool = True,
    spark_start: bool = True,
    streaming_runs: int = spark_workloads.STREAMING_RUNS,
    oracle_runs: int = 3,
) -> dict[str, Any]:
    import tempfile

    from kafkatest.spark import kafka_spark_session, stop_spark_session

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    result: dict[str, Any] = {
        "machine": machine(),
        "records": records,
        "spark_records": spark_records,
    }
    spark = kafka_spark_session(app_name="kafkatest-bench")
    try:
        with tempfile.TemporaryDirectory(prefix="kafkatest-bench-") as scratch:
            # The client rounds run with every broker up, so that the brokers can take
            # turns, the others paused; each broker's Spark and group workloads then
            # run on a fresh broker of its own, with no other broker up.
            brokers = {backend: bench_broker(backend, Path(scratch)) for backend in backends}
            with running(brokers) as startup:
                log(f"produce and consume, the brokers taking turns: {', '.join(brokers)}")
                rates = workloads.produce_and_consume_rates(
                    {name: broker.bootstrap_servers for name, broker in brokers.items()},
                    "bench",
                    records,
                    turn=lambda name: alone(brokers, name),
                    pids={name: broker.pid for name, broker in brokers.items()},
                )
            for backend in backends:
                log(f"{backend}:")
                figures = {"process_startup_s": startup[backend]}
                figures.update(client_figures(rates[backend], records, log))
                broker = bench_broker(backend, Path(scratch))
                with running({backend: broker}):
                    figures.update(
                        measure(broker, spark, records, spark_records, log, streaming_runs)
                    )
                result[backend] = figures
            if contention:
                contended = measure_contended(
                    {backend: bench_broker(backend, Path(scratch)) for backend in backends},
                    records,
                    log,
                )
                for backend, figures in contended.items():
                    result[backend].update(figures)
            if oracle_runs > 0:
                for backend in backends:
                    result[backend].update(oracle_figures_on(spark, backend, log, oracle_runs))
            for backend in backends:
                figures = result[backend]
                if Capability.STATE in capabilities_of(backend):
                    # a broker that can run in process: its in-process start is the figure
                    figures.update(in_process_emulator_startup())
                else:
                    figures["startup_s"] = figures["process_startup_s"]
                log(f"{backend} startup: {figures['startup_s']} s")
    finally:
        stop_spark_session(spark)
    if spark_start:
        result["spark"] = spark_start_figures(log)
    if "emulator" in result and "kafka" in result:
        e, k = result["emulator"], result["kafka"]
        result["ratios_emulator_over_kafka"] = {
            key: float(f"{e[key] / k[key]:.3g}") for key in e if k.get(key)
        }
    if output is not None:
        output.write_text(json.dumps(result, indent=2) + "\n")
    return result
