"""`kafkatest bench` runs every workload it reports, here small and on the emulator only
(the figures themselves are measured by hand: BENCHMARKS.md; no timing is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest


def test_bench_reports_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "kafkatest.cli", "bench", "--backends", "emulator"),
            # enough records for the broker's CPU to show in /proc's 10 ms ticks
            *("--records", "50000", "--spark-records", "2000", "--streaming-runs", "1"),
            *("--no-spark-start", "--oracle-runs", "1", "--json", str(out)),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(out.read_text())["emulator"]
    for name in (
        "produce_records_per_s",
        "consume_records_per_s",
        "produce_client_cpu_s",
        "consume_client_cpu_s",
        "broker_cpu_per_mrec_s",
        "broker_produce_cpu_per_mrec_s",
        "broker_consume_cpu_per_mrec_s",
        "client_cpu_per_mrec_s",
        "group_join_s",
        "group_join_mean_s",
        "spark_read_s",
        "streaming_test_s",
        "in_memory_streaming_s",
        "streaming_over_in_memory",
        "streaming_test_default_checkpoints_s",
        "in_memory_streaming_default_checkpoints_s",
        "one_core_produce_records_per_s",
        "one_core_consume_records_per_s",
        "startup_s",
        "oracle_job_run_s",
        "oracles_s",
        "oracles_x",
        "oracles_separately_x",
    ):
        assert figures[name] > 0, name


def test_the_rerun_figure_runs_one_streaming_test_through_pytest() -> None:
    from kafkatest.bench.spark_workloads import pytest_rerun

    # It raises, with pytest's output, unless the generated test passed.
    assert pytest_rerun("--spark-remote=off") > 0


def test_bench_refuses_an_unknown_backend() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kafkatest.cli", "bench", "--backends", "emulatr"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "--backends takes emulator and/or kafka, not 'emulatr'" in done.stderr


def test_two_trees_are_compared_round_by_round() -> None:
    """`python -m kafkatest.bench.trees`: each tree's emulator serves its rounds."""
    from kafkatest.bench.trees import compare

    root = str(Path(__file__).resolve().parent.parent)
    figures = compare({"base": root, "head": root}, rounds=1)
    for name in ("base", "head"):
        assert len(figures[name]["produce"]) == len(figures[name]["consume"]) == 1
        assert figures[name]["produce"][0] > 0 and figures[name]["consume"][0] > 0


def test_the_floor_of_a_cold_start_is_measured() -> None:
    """Bare Spark in a fresh process (no kafkatest, no connector) and pytest's own start."""
    from kafkatest.bench.spark_workloads import bare_spark_cold, pytest_start

    # Tuned: kafkatest's settings on a bare session (the plain one differs by a dict).
    assert bare_spark_cold(tuned=True) > 0
    assert pytest_start() > 0


#: The figures under "spark" in the bench's JSON, each a positive number.
SPARK_FIGURES = (
    "bare_spark_cold_s",
    "bare_spark_tuned_cold_s",
    "pytest_start_s",
    "spark_start_cold_s",
    "spark_start_cold_cds_s",
    "spark_start_cold_cds_first_s",
    "spark_start_cold_cds_writing_s",
    "cds_archive_mb",
    "cds_build_s",
    "jvm_exit_s",
    "jvm_exit_writing_cds_s",
    "pytest_rerun_cold_s",
    "rerun_cold_over_bare_and_pytest",
    "rerun_cold_over_tuned_bare_and_pytest",
    "spark_start_warm_s",
    "pytest_rerun_warm_s",
)


def test_the_spark_figures_are_all_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """`spark_start_figures` reports every figure, the ratio made of them, and the
    archive's size and build time; its workloads (each tested above or by the CDS
    tests) are stood in for, so this runs no Spark."""
    from kafkatest.bench import spark_start, spark_workloads
    from kafkatest.spark import server

    def start_and_jvm(remote: str = "", env: dict[str, str] | None = None) -> tuple[float, None]:
        folder = (env or {}).get("KAFKATEST_SPARK_CDS", "off")
        if folder != "off":  # as a start that wrote the archive leaves it
            (Path(folder) / "spark-4-abc.jsa").write_bytes(b"x" * 300_000)
        return 5.0, None

    monkeypatch.setattr(
        spark_workloads, "bare_spark_cold", lambda tuned=False: 3.0 if tuned else 4.0
    )
    monkeypatch.setattr(spark_workloads, "pytest_start", lambda: 1.0)
    monkeypatch.setattr(spark_workloads, "spark_start_and_jvm", start_and_jvm)
    monkeypatch.setattr(spark_workloads, "spark_start", lambda remote="", env=None: 1.0)
    monkeypatch.setattr(spark_workloads, "pytest_rerun", lambda *a, **k: 6.0)
    monkeypatch.setattr(spark_workloads, "wait_for_exit", lambda pid, timeout_s=0: None)
    exits = iter([0.5, 2.5, 0.5, 0.5])
    monkeypatch.setattr(spark_start, "_exit_seconds", lambda _pid: next(exits))
    monkeypatch.setattr(server, "running_server", lambda: None)
    monkeypatch.setattr(server, "start_server", lambda: SimpleNamespace(remote="sc://x"))
    monkeypatch.setattr(server, "stop_server", lambda: None)
    figures = spark_start.spark_start_figures(lambda _text: None)
    for name in SPARK_FIGURES:
        assert figures[name] > 0, name
    assert figures["rerun_cold_over_bare_and_pytest"] == 1.2  # 6 / (4 + 1)
    assert figures["rerun_cold_over_tuned_bare_and_pytest"] == 1.5  # 6 / (3 + 1)
    assert figures["cds_build_s"] == 2.0  # the exit that wrote it, less a plain exit
