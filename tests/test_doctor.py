"""`kafkatest doctor`: every check passes on a set-up machine; each problem names its fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kafkatest.doctor import check_jars, check_java, run_checks


def _doctor(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafkatest.cli", "doctor"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_a_set_up_machine_passes_every_check() -> None:
    result = _doctor(dict(os.environ))
    assert result.returncode == 0, result.stdout
    assert "6 of 6 checks passed" in result.stdout
    assert "[ok  ] java: Java " in result.stdout
    assert "[ok  ] connector jars: org.apache.spark:spark-sql-kafka-0-10_" in result.stdout


def test_missing_java_and_maven_are_named_with_their_fix(tmp_path: Path, monkeypatch) -> None:
    env = {**os.environ, "PATH": str(tmp_path), "KAFKATEST_CACHE_DIR": str(tmp_path / "c")}
    result = _doctor(env)
    assert result.returncode == 1
    assert "[FAIL] java: not on PATH" in result.stdout
    assert "fix: install a JDK 17+" in result.stdout
    assert "Maven (mvn) is not on PATH" in result.stdout
    monkeypatch.setenv("PATH", str(tmp_path))
    assert not check_java().ok
    monkeypatch.setenv("KAFKATEST_CACHE_DIR", str(tmp_path / "c"))
    jars = check_jars("kafka", resolve=False)
    assert not jars.ok and "apt-get install maven" in jars.fix


def test_checks_are_plain_functions() -> None:
    names = [check.name for check in run_checks()]
    assert names == [
        "java",
        "pyspark",
        "cache",
        "connector jars",
        "kafka backend jars",
        "loopback ports",
    ]
