"""`kafkatest bench` runs every workload it reports, here small and on the emulator only
(the figures themselves are measured by hand: BENCHMARKS.md; no timing is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_bench_reports_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "kafkatest.cli", "bench", "--backends", "emulator"),
            *("--records", "2000", "--spark-records", "2000", "--streaming-runs", "1"),
            *("--no-spark-start", "--json", str(out)),
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
