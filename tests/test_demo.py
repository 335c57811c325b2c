"""`kafkatest demo`, as a newcomer runs it (a Spark job on the emulator): exit 0 when the
check holds, 1 when it does not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

JOBS = Path(__file__).resolve().parent.parent / "fixtures" / "jobs"


def run_demo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafkatest.cli", "demo", "--records", "200", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_demo_passes_on_the_sample_job() -> None:
    done = run_demo()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "at-least-once delivery held" in done.stdout
    assert "expected 200, seen 200, distinct 200, missing 0" in done.stdout
    assert done.stdout.rstrip().endswith("result: OK")


def test_demo_fails_and_names_what_a_lossy_job_lost() -> None:
    done = run_demo("--job", str(JOBS / "lossy_orders.py"))
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert "at-least-once delivery failed" in done.stdout
    assert "missing" in done.stdout and "orders[" in done.stdout
    assert done.stdout.rstrip().endswith("result: FAILED")
