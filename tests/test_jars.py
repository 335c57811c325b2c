"""Jar resolution: real Maven, the per-user cache, overrides and the errors a user sees."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kafkatest.errors import SetupError
from kafkatest.jars import kafka_broker_jars, spark_connector_jars
from kafkatest.jars.coordinates import SparkBuild, connector_version_candidates


def test_cli_prints_connector_jars() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kafkatest.cli", "jars", "spark"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout.split()
    names = [Path(p).name for p in out]
    assert any(n.startswith("spark-sql-kafka-0-10_") for n in names)
    assert any(n.startswith("kafka-clients-") for n in names)
    assert all(Path(p).is_file() for p in out)
    # PySpark already ships these; a second copy on the classpath would conflict.
    assert not any(n.startswith(("scala-library", "slf4j-api", "hadoop-client")) for n in names)


def test_cli_prints_kafka_broker_jars() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kafkatest.cli", "jars", "kafka"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout.split()
    assert any(Path(p).name.startswith("kafka_2.13-") for p in out)


def test_cached_resolution_needs_no_maven(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    expected = spark_connector_jars(quiet=True)  # fills the cache if it was empty
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    assert spark_connector_jars(quiet=True) == expected


def test_missing_maven_says_what_to_do(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KAFKATEST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SetupError, match=r"Maven \(mvn\) is needed.*apt-get install maven"):
        kafka_broker_jars(quiet=True)


def test_unknown_artifact_is_reported(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A skipped connector version says why at once (the fallback's lines read as retries
    without it), and the final error says why for each version tried."""
    monkeypatch.setenv("KAFKATEST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KAFKATEST_CONNECTOR_VERSION", "0.0.1")
    why = r"Maven could not find org\.apache\.spark:spark-sql-kafka-0-10_2\.1\d:0\.0\.1"
    with pytest.raises(
        SetupError,
        match=rf"no Spark Kafka connector .*spark-sql-kafka-0-10_2\.1\d:0\.0\.1 \({why}",
    ):
        spark_connector_jars()
    said = capsys.readouterr().err
    assert re.search(rf"^kafkatest: skipped \S+:0\.0\.1: {why} in the repositories", said, re.M)
    # Maven's "not found" is remembered: asking again needs no Maven (a patch-release
    # fallback such as PySpark 4.2.1 -> connector 4.2.0 would otherwise pay a Maven run
    # at every session start), silently: the final error says whose answer it was.
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(
        SetupError, match=r"0\.0\.1 \(Maven could .*\(Maven's answer in an earlier run\)"
    ):
        spark_connector_jars()
    assert "skipped" not in capsys.readouterr().err


def test_jars_dir_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "a.jar").write_bytes(b"")
    monkeypatch.setenv("KAFKATEST_SPARK_JARS_DIR", str(tmp_path))
    assert spark_connector_jars() == [tmp_path / "a.jar"]
    monkeypatch.setenv("KAFKATEST_SPARK_JARS_DIR", str(tmp_path / "nothing"))
    with pytest.raises(SetupError, match=r"holds no \.jar files"):
        spark_connector_jars()


def test_patches_first_then_the_newest_release_of_each_earlier_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("KAFKATEST_CONNECTOR_VERSION", raising=False)
    build = SparkBuild(version="4.2.1", scala_binary="2.13", jars_dir=Path("."))
    lines = ["[4.1.0],[4.1.1,4.2.0)", "[4.0.0],[4.0.1,4.1.0)"]
    assert connector_version_candidates(build) == ["4.2.1", "4.2.0", *lines]
    new_line = SparkBuild(version="4.3.0", scala_binary="2.13", jars_dir=Path("."))
    assert connector_version_candidates(new_line) == ["4.3.0", "[4.2.0],[4.2.1,4.3.0)", *lines]
    # Never below kafkatest's oldest line: no 3.4 connector for a 3.5 without its own.
    oldest = SparkBuild(version="3.5.1", scala_binary="2.12", jars_dir=Path("."))
    assert connector_version_candidates(oldest) == ["3.5.1", "3.5.0"]
    monkeypatch.setenv("KAFKATEST_CONNECTOR_VERSION", "4.1.0")
    assert connector_version_candidates(build) == ["4.1.0"]


def test_a_line_missing_from_the_repository_falls_back_to_the_previous_and_says_so_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """PySpark 4.3.0's connector is on Maven Central but not on the Maven mirror CI
    reaches: the resolver takes 4.2's newest (4.2.0), says so in one line in the run
    that decided it, and nothing on the next (the choice is cached, no Maven runs);
    `kafkatest doctor` shows it. Real Maven, into an empty manifest cache over the
    user's repository (so only metadata is downloaded)."""
    from kafkatest.apps.doctor import check_jars
    from kafkatest.jars import coordinates, resolve
    from kafkatest.jars.maven import cache_dir

    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "m2").symlink_to(cache_dir() / "m2")
    monkeypatch.setenv("KAFKATEST_CACHE_DIR", str(cache))
    monkeypatch.delenv("KAFKATEST_CONNECTOR_VERSION", raising=False)
    installed = coordinates.installed_spark()
    pyspark_43 = SparkBuild("4.3.0", "2.13", installed.jars_dir)
    monkeypatch.setattr(coordinates, "installed_spark", lambda: pyspark_43)
    monkeypatch.setattr(resolve, "installed_spark", lambda: pyspark_43)
    jars = spark_connector_jars()
    said = capsys.readouterr().err
    assert "spark-sql-kafka-0-10_2.13-4.2.0.jar" in {jar.name for jar in jars}
    notice = [line for line in said.splitlines() if "runs with the Kafka connector" in line]
    assert notice == [
        "kafkatest: PySpark 4.3.0 runs with the Kafka connector 4.2.0: no 4.3 connector is on "
        "the Maven repository reached, and this is the newest earlier line's that is "
        "(KAFKATEST_CONNECTOR_VERSION picks another)"
    ], said
    monkeypatch.setenv("PATH", str(tmp_path))  # no Maven: the choice is remembered
    assert spark_connector_jars() == jars
    assert capsys.readouterr().err == ""
    shown = check_jars("spark", resolve=False)
    assert shown.ok and shown.detail.startswith("org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0:")
    assert "PySpark 4.3.0 runs with the Kafka connector 4.2.0" in shown.detail


def test_concurrent_first_resolutions_run_maven_once_and_show_one_summary(tmp_path: Path) -> None:
    """Two processes (as two xdist workers) resolve into one empty cache at once.

    The lock is the resolver's (`kafkatest.jars.maven.resolve`), whoever calls it: a
    worker's `kafka_broker_jars` or `spark_connector_jars`, or `kafkatest jars`. One
    runs Maven and prints one progress line and one summary (the class path's jars,
    never Maven's own plugins); the other waits on the lock and reads the finished
    manifest. Here they resolve Kafka's client alone (5 jars): Maven's own plugins, in
    the empty cache too, are most of the work either way.
    """
    env = {**os.environ, "KAFKATEST_CACHE_DIR": str(tmp_path / "cache")}
    resolve = (
        "from kafkatest.jars.maven import resolve\n"
        "print(*resolve(['org.apache.kafka:kafka-clients:4.1.1']), sep='\\n')"
    )
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", resolve],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=600) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs[0][1][-2000:] + outputs[1][1][-2000:]
    assert outputs[0][0] == outputs[1][0]  # the same jar list
    assert "kafka-clients-4.1.1.jar" in outputs[0][0]
    resolvers = [err for _, err in outputs if "resolving org.apache.kafka:kafka-clients" in err]
    assert len(resolvers) == 1, [err[-500:] for _, err in outputs]
    (err,) = resolvers
    summary = [line for line in err.splitlines() if line.startswith("kafkatest: resolved ")]
    assert len(summary) == 1 and " jars (" in summary[0] and "MB) on the class path" in summary[0]
    assert "maven-" not in err and "plexus" not in err


def test_a_classified_coordinate_asks_maven_for_that_jar() -> None:
    """Kafka's test jars (`kafka-tools-4.1.1-test.jar`) are named by a classifier."""
    from kafkatest.jars.maven import _pom

    pom = _pom(
        ["org.apache.kafka:kafka-tools:jar:test:4.1.1", "org.apache.kafka:kafka-tools:4.1.1"]
    )
    assert (
        "<artifactId>kafka-tools</artifactId><version>4.1.1</version><classifier>test</classifier>"
    ) in pom
    assert "<artifactId>kafka-tools</artifactId><version>4.1.1</version></dependency>" in pom
    with pytest.raises(SetupError, match="group:artifact:jar:classifier:version"):
        _pom(["org.apache.kafka:kafka-tools:test:4.1.1"])
