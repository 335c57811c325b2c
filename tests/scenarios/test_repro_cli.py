"""``kafkatest repro FILE`` replays a saved scenario on its own broker and judges it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_records_deleted import records_deleted

pytestmark = pytest.mark.spark


def test_repro_prints_what_spark_did_and_exits_1_when_an_expectation_fails(
    tmp_path: Path,
) -> None:
    scenario = records_deleted(fail=True)
    scenario.expect.outcome = "continues"  # wrong on purpose: Spark fails this run
    path = scenario.save(tmp_path / "scenario.json")
    done = subprocess.run(
        [sys.executable, "-m", "kafkatest.cli", "repro", str(path), "--backend", "emulator"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr[-2000:]
    report = done.stdout
    assert "EXPECTATIONS FAILED" in report
    assert "fired after batch 0" in report
    # Named by Spark 4's condition, or (3.5) by the report from Spark's message; not a miss.
    assert "KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE" in report
    assert "error does not" not in report
    assert "expected: the job continues; instead the job failed" in report
    assert "lost as expected 5-29" in report


def test_the_shipped_scenario_file_reproduces(tmp_path: Path) -> None:
    """fixtures/scenarios/ holds the README's example; it must keep holding."""
    path = (
        Path(__file__).resolve().parents[2]
        / "fixtures"
        / "scenarios"
        / "records-deleted-fail-false.yaml"
    )
    done = subprocess.run(
        [sys.executable, "-m", "kafkatest.cli", "repro", str(path), "--backend", "emulator"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "fired after batch 0" in done.stdout
