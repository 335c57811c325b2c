"""How long Spark takes to start, as a test run meets it: bare Spark (the floor),
kafkatest's cold start without and with the driver's class-data-sharing archive,
pytest's own start, re-runs of one test cold, warm and through `kafkatest pytest`.

Each figure is a fresh process (`spark_workloads`); `run.run_bench` reports them under
``"spark"``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

from kafkatest.bench import spark_workloads


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


def _exit_seconds(pid: int | None) -> float:
    """Seconds until the driver JVM `pid`, whose Python has just exited, has gone."""
    started = time.perf_counter()
    spark_workloads.wait_for_exit(pid)
    return time.perf_counter() - started
