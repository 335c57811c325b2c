"""`kafkatest doctor`: every check passes on a set-up machine; each problem names its fix."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from kafkatest.apps.doctor import check_jars, check_java, run_checks


def _doctor(
    env: dict[str, str], *args: str, timeout: int = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafkatest.cli", "doctor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


def test_a_set_up_machine_passes_every_check() -> None:
    result = _doctor(dict(os.environ))
    assert result.returncode == 0, result.stdout
    assert "7 of 7 checks passed" in result.stdout
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
        "python packages",
        "cache",
        "connector jars",
        "kafka backend jars",
        "loopback ports",
    ]


def test_doctor_counts_the_jars_as_the_resolver_does(tmp_path: Path) -> None:
    """`doctor --resolve` and the resolver's summary name the same count and size.

    The doctor once said "resolved: 4 jars" (what is left after dropping the jars
    PySpark ships) right under the resolver's "13 jars (63.5 MB)". Maven runs for
    real, into an empty manifest cache over the user's repository (no download).
    """
    from kafkatest.jars.coordinates import connector_version_candidates, installed_spark
    from kafkatest.jars.maven import cache_dir

    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "m2").symlink_to(cache_dir() / "m2")
    version = next(
        v
        for v in connector_version_candidates(installed_spark())
        if any((cache_dir() / "m2" / "org/apache/spark").glob(f"spark-sql-kafka-0-10_*/{v}/*.jar"))
    )
    env = {**os.environ, "KAFKATEST_CACHE_DIR": str(cache), "KAFKATEST_CONNECTOR_VERSION": version}
    result = _doctor(env, "--resolve", timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr[-2000:]
    resolver = re.search(
        r"resolved org\.apache\.spark:spark-sql-kafka\S+: (\d+ jars \([\d.]+ \w+\))", result.stderr
    )
    assert resolver, result.stderr[-2000:]
    doctor = re.search(
        r"\[ok  \] connector jars: \S+: (\d+ jars \([\d.]+ \w+\)) resolved, (\d+) of them given to Spark",
        result.stdout,
    )
    assert doctor, result.stdout
    assert doctor.group(1) == resolver.group(1)
    assert 0 < int(doctor.group(2)) <= int(doctor.group(1).split()[0])
