"""Run every workload against each broker in one process and write the figures.

The emulator is measured as a separate process (`kafkatest emulator`), like the
Kafka JVM, so that its memory can be read and the clients' Python work does not
share its interpreter; its in-process start-up (what fixtures pay) is timed apart.
Produce and consume run with both brokers up, taking turns round by round (the
broker whose turn it is not is paused); then each broker, started afresh, runs its
group and Spark workloads alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from confluent_kafka.admin import AdminClient

from kafkatest.bench import spark_workloads, workloads
from kafkatest.brokers.capabilities import Capability
from kafkatest.brokers.process import free_port, spawn, terminate
from kafkatest.brokers.registry import capabilities_of
from kafkatest.spark.session import release_kafka_clients


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


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


_FIRST_START = """
import json, time
started = time.perf_counter()
from kafkatest.brokers.emulator import EmulatorBroker
imported = time.perf_counter()
broker = EmulatorBroker()
broker.start()
ready = time.perf_counter()
broker.close()
print(json.dumps({"import_s": imported - started, "startup_s": ready - imported}))
"""


def in_process_emulator_startup() -> dict[str, float]:
    """The first in-process start in a fresh interpreter, as a test session pays it.

    Importing the emulator (handlers and protocol schemas) is timed apart: a run
    pays it once, whatever it starts.
    """
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_START], capture_output=True, text=True, check=True
    )
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return {key: round(value, 4) for key, value in figures.items()}


class EmulatorProcess:
    """`kafkatest emulator` as a child process on a free port; with `tree`, the
    emulator of that source tree (its directory first on the child's PYTHONPATH)."""

    backend = "emulator"

    def __init__(self, workdir: Path, tree: str | None = None) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.tree = tree
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self) -> None:
        command = [sys.executable, "-m", "kafkatest.cli", "emulator", "--port", str(self.port)]
        log, cwd = self.workdir / "emulator.log", Path(self.tree or self.workdir)
        self.process = spawn(command, log, cwd, {"PYTHONPATH": self.tree} if self.tree else None)
        # Quiet: until the child listens, librdkafka would log every refused connect.
        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers, "log_level": 0})
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if admin.list_topics(timeout=1).brokers:
                    return
            except Exception:
                time.sleep(0.02)
        raise RuntimeError("standalone emulator did not start")

    def close(self) -> None:
        if self.process is not None:
            terminate(self.process)


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


@contextlib.contextmanager
def alone(brokers: dict[str, Any], measured: str) -> Iterator[None]:
    """Pause every broker process but `measured` (SIGSTOP) for the block, so that the
    brokers can take turns without one's idle work landing on the other's: an idle
    Kafka JVM takes a tenth of a core here, an idle emulator none. A turn lasts a
    second or two, well inside Kafka's broker session timeout (9 s)."""
    stopped: list[int] = []
    try:
        for name, broker in brokers.items():
            if name != measured:
                os.kill(broker.pid, signal.SIGSTOP)
                stopped.append(broker.pid)
        for pid in stopped:
            _wait_until_stopped(pid)
        yield
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)


def process_state(pid: int) -> str:
    """The state letter of a process in /proc ("T": stopped by a signal)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _wait_until_stopped(pid: int, timeout_s: float = 5.0) -> None:
    """SIGSTOP takes effect when the process next runs, not when `kill` returns: wait
    for it, so that a turn never starts beside a broker still finishing its slice."""
    deadline = time.monotonic() + timeout_s
    while process_state(pid) != "T":
        if time.monotonic() > deadline:
            raise RuntimeError(f"broker process {pid} did not stop within {timeout_s} s")
        time.sleep(0.001)


@contextlib.contextmanager
def running(brokers: dict[str, Any]) -> Iterator[dict[str, float]]:
    """Start every broker, one after the other; yields the seconds each took to be
    ready, and closes them all on leaving."""
    startup: dict[str, float] = {}
    try:
        for name, broker in brokers.items():
            started = time.perf_counter()
            broker.start()
            startup[name] = round(time.perf_counter() - started, 3)
        yield startup
    finally:
        for broker in brokers.values():
            broker.close()


@contextlib.contextmanager
def one_core() -> Iterator[None]:
    """Pin this process, and so the broker and clients it starts, to one core: the
    contention a loaded CI machine gives, where broker and clients share a core."""
    everything = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(everything)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, everything)


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


def spark_start_figures(log: Callable[[str], None]) -> dict[str, float]:
    """SparkSession start in a fresh process: bare Spark's (the floor), kafkatest's
    cold start without and with the driver's class-data-sharing archive, pytest's own
    start, a cold and a warm re-run of one test, and a start through a warm server.

    The archive is written to a directory of the bench's own (not the user's cache),
    by a first start that writes it, so that its build is measured too: the seconds
    the driver JVM takes to exit once its Python has its result (it writes the
    archive then), against the same without writing one."""
    import tempfile

    from kafkatest.spark.server import running_server, start_server, stop_server

    figures: dict[str, float] = {}
    figures["pytest_start_s"] = round(
        statistics.median(spark_workloads.pytest_start() for _ in range(3)), 2
    )
    log(
        f"pytest's own start (collecting nothing, kafkatest installed): {figures['pytest_start_s']} s"
    )
    with tempfile.TemporaryDirectory(prefix="kafkatest-bench-cds-") as folder:
        off, archive = {"KAFKATEST_SPARK_CDS": "off"}, {"KAFKATEST_SPARK_CDS": folder}
        cold, jvm = spark_workloads.spark_start_and_jvm(env=off)
        exit_s = _exit_seconds(jvm)
        log(f"spark start, cold, no archive: {cold:.1f} s (its JVM exits {exit_s:.1f} s later)")
        building, jvm = spark_workloads.spark_start_and_jvm(env=archive)
        build_exit_s = _exit_seconds(jvm)
        log(
            f"spark start, cold, writing the archive: {building:.1f} s (its JVM exits "
            f"{build_exit_s:.1f} s later, writing it)"
        )
        # The first start with an archive checks it (one short JVM) and moves it into
        # place; the second maps it as every later start does.
        first, jvm = spark_workloads.spark_start_and_jvm(env=archive)
        _exit_seconds(jvm)
        sizes = [path.stat().st_size for path in Path(folder).glob("*.jsa")]
        with_archive, jvm = spark_workloads.spark_start_and_jvm(env=archive)
        _exit_seconds(jvm)
        log(
            f"spark start, cold, with the archive: {with_archive:.1f} s (the first, "
            f"which checks it: {first:.1f} s; archive {sizes[0] / 1e6 if sizes else 0:.0f} MB)"
        )
        floors = _cold_floors(archive)
        rerun_cold = floors.pop("pytest_rerun_cold_s")
        figures.update(floors)
        log(
            f"bare Spark, cold (local[2], an in-memory query, no kafkatest): PySpark's "
            f"defaults {floors['bare_spark_cold_s']} s, kafkatest's settings "
            f"{floors['bare_spark_tuned_cold_s']} s"
        )
        log(f"pytest re-run of one streaming test, cold (with the archive): {rerun_cold:.1f} s")
    figures.update(
        {
            "spark_start_cold_s": round(cold, 2),
            "spark_start_cold_cds_s": round(with_archive, 2),
            "spark_start_cold_cds_first_s": round(first, 2),
            "spark_start_cold_cds_writing_s": round(building, 2),
            "cds_archive_mb": round(sizes[0] / 1e6, 1) if sizes else 0.0,
            "cds_build_s": round(max(build_exit_s - exit_s, 0.0), 2),
            "jvm_exit_s": round(exit_s, 2),
            "jvm_exit_writing_cds_s": round(build_exit_s, 2),
            "pytest_rerun_cold_s": round(rerun_cold, 2),
        }
    )
    figures["rerun_cold_over_bare_and_pytest"] = round(
        rerun_cold / (figures["bare_spark_cold_s"] + figures["pytest_start_s"]), 2
    )
    figures["rerun_cold_over_tuned_bare_and_pytest"] = round(
        rerun_cold / (figures["bare_spark_tuned_cold_s"] + figures["pytest_start_s"]), 2
    )
    log(
        "pytest re-run, cold / (bare Spark + pytest's start): "
        f"{figures['rerun_cold_over_bare_and_pytest']} against PySpark's defaults, "
        f"{figures['rerun_cold_over_tuned_bare_and_pytest']} against the tuned floor "
        "(target <= 1.0)"
    )
    started_here = running_server() is None
    server = start_server()
    try:
        spark_workloads.spark_start(server.remote)  # the server's first session
        warm = spark_workloads.spark_start(server.remote)
        for _ in range(2):  # the first runs on a new server are its JIT's warm-up
            spark_workloads.pytest_rerun()
        rerun_warm = statistics.median(spark_workloads.pytest_rerun() for _ in range(3))
        rerun_forked = _forked_reruns()
    finally:
        if started_here:
            stop_server()
    log(f"spark start, warm (kafkatest spark-server): {warm:.1f} s")
    log(f"pytest re-run of one streaming test, warm: {rerun_warm:.1f} s")
    log(f"the same through `kafkatest pytest` (its fork server): {rerun_forked:.1f} s")
    figures["spark_start_warm_s"] = round(warm, 2)
    figures["pytest_rerun_warm_s"] = round(rerun_warm, 2)
    figures["pytest_rerun_forked_s"] = round(rerun_forked, 2)
    return figures


def _cold_floors(archive: dict[str, str], runs: int = 3) -> dict[str, float]:
    """Bare Spark cold, with PySpark's defaults and with kafkatest's settings, and
    kafkatest's cold re-run of one test, taking turns (a busy moment falls on all
    three), medians of `runs` each."""
    default, tuned, reruns = [], [], []
    for _ in range(runs):
        default.append(spark_workloads.bare_spark_cold())
        tuned.append(spark_workloads.bare_spark_cold(tuned=True))
        reruns.append(spark_workloads.pytest_rerun("--spark-remote=off", env_vars=archive))
    return {
        "bare_spark_cold_s": round(statistics.median(default), 2),
        "bare_spark_tuned_cold_s": round(statistics.median(tuned), 2),
        "pytest_rerun_cold_s": round(statistics.median(reruns), 2),
    }


def _forked_reruns() -> float:
    """The warm re-run through `kafkatest pytest`: median of three after the run that
    starts the fork server and one more, with a fork server of the bench's own (in a
    cache folder of its own, stopped after), on the running warm Spark server."""
    import tempfile

    from kafkatest.apps.pytest_forkserver import servers_dir, stop_servers
    from kafkatest.spark.server import state_file

    with tempfile.TemporaryDirectory(prefix="kt-bench-") as cache:
        env_vars = {"KAFKATEST_CACHE_DIR": cache, "KAFKATEST_SPARK_SERVER_STATE": str(state_file())}
        try:
            for _ in range(2):
                spark_workloads.pytest_rerun(env_vars=env_vars, forked=True)
            return statistics.median(
                spark_workloads.pytest_rerun(env_vars=env_vars, forked=True) for _ in range(3)
            )
        finally:
            stop_servers(servers_dir(Path(cache)))


def _oracle_figures(
    spark: Any, backend: str, log: Callable[[str], None], runs: int
) -> dict[str, float]:
    """The oracles' cost on the payments example, on a broker of `backend` as a test
    has it (the emulator in this process)."""
    from kafkatest.bench.oracles import oracle_figures
    from kafkatest.brokers.registry import start_broker

    with start_broker(backend) as broker:
        figures = oracle_figures(spark, broker, runs)
    log(
        f"  oracles on the payments example: assert_invariants {figures['oracles_s']} s, one "
        f"run of the job {figures['oracle_job_run_s']} s: oracles_x {figures['oracles_x']} "
        f"(target <= 4; the three one by one: {figures['oracles_separately_x']})"
    )
    return figures


def _exit_seconds(pid: int | None) -> float:
    """Seconds until the driver JVM `pid`, whose Python has just exited, has gone."""
    started = time.perf_counter()
    spark_workloads.wait_for_exit(pid)
    return time.perf_counter() - started


def _kafka_process(scratch: Path) -> Any:
    from kafkatest.brokers.kafka_process import KafkaProcessBroker

    broker = KafkaProcessBroker()
    broker.jvm_flags = ("-XX:+UseG1GC",)  # kafka-run-class's collector, full JIT: as deployed
    return broker


#: The broker each benched backend runs as: the emulator as a child process like
#: the JVM, so that both pay for a process of their own.
BENCH_BROKERS: dict[str, Callable[[Path], Any]] = {
    "emulator": EmulatorProcess,
    "kafka": _kafka_process,
}


def _broker(backend: str, scratch: Path) -> Any:
    return BENCH_BROKERS[backend](scratch)


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
            brokers = {backend: _broker(backend, Path(scratch)) for backend in backends}
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
                broker = _broker(backend, Path(scratch))
                with running({backend: broker}):
                    figures.update(
                        measure(broker, spark, records, spark_records, log, streaming_runs)
                    )
                result[backend] = figures
            if contention:
                contended = measure_contended(
                    {backend: _broker(backend, Path(scratch)) for backend in backends},
                    records,
                    log,
                )
                for backend, figures in contended.items():
                    result[backend].update(figures)
            if oracle_runs > 0:
                for backend in backends:
                    result[backend].update(_oracle_figures(spark, backend, log, oracle_runs))
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
