"""The Spark driver's class-data-sharing archive (`kafkatest.spark.cds`): written by a
first start, checked and mapped by the next, keyed by what the JVM checks, and silent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafkatest.spark import cds


def test_off_adds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKATEST_SPARK_CDS", "off")
    assert cds.driver_archive({}, ()) == cds.Archive()


def test_the_name_changes_with_a_jar_the_flags_and_java(tmp_path: Path) -> None:
    jar = tmp_path / "connector.jar"
    jar.write_bytes(b"one")
    java = (Path("/usr/bin/java"), "17.0.15+6")
    settings = {"spark.jars": str(jar)}
    name = cds._archive_name(settings, ("-XX:+UseSerialGC",), java)
    assert name == cds._archive_name(settings, ("-XX:+UseSerialGC",), java)
    assert name != cds._archive_name(settings, ("-XX:+UseG1GC",), java)
    assert name != cds._archive_name(settings, ("-XX:+UseSerialGC",), (java[0], "21.0.1"))
    jar.write_bytes(b"two, longer")
    assert name != cds._archive_name(settings, ("-XX:+UseSerialGC",), java)


def test_one_start_writes_the_archive_the_others_wait(tmp_path: Path) -> None:
    assert cds._claim(tmp_path, "spark-x-1") is not None
    assert cds._claim(tmp_path, "spark-x-1") is None  # this process still holds it
    cds._finish_a_build(tmp_path, "spark-x-1")
    assert (tmp_path / "spark-x-1.building").exists()


def test_an_archive_the_jvm_would_not_map_is_dropped(tmp_path: Path) -> None:
    """A JVM that is gone left an archive that fails the check (here: a check that
    fails): it is removed, with its claim, and nothing is moved into place."""
    part, claim = tmp_path / "spark-x-1.part", tmp_path / "spark-x-1.building"
    part.write_bytes(b"truncated")
    record = {"jvm_pid": 2**22 + 1, "java": "false", "class_path": "", "flags": []}
    claim.write_text(json.dumps(record))
    cds._finish_a_build(tmp_path, "spark-x-1")
    assert not part.exists() and not claim.exists()
    assert not (tmp_path / "spark-x-1.jsa").exists()


def test_abandoned_builds_of_other_names_are_removed(tmp_path: Path) -> None:
    """A build only its own name finishes: a virtualenv made anew never comes back for
    it, so its part (150-200 MB) goes once its writer is gone; a live one stays."""
    gone = {"python_pid": 2**22 + 1, "jvm_pid": 2**22 + 2}
    live = {"python_pid": os.getpid()}
    for name, record in (("spark-x-old", gone), ("spark-x-live", live), ("spark-x-me", gone)):
        (tmp_path / f"{name}.building").write_text(json.dumps(record))
        (tmp_path / f"{name}.part").write_bytes(b"part")
    cds._forget_abandoned(tmp_path, "spark-x-me")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "spark-x-live.building",
        "spark-x-live.part",
        "spark-x-me.building",  # its own name: `_finish_a_build` decides
        "spark-x-me.part",
    ]


def test_a_claim_whose_session_never_started_is_forgotten(tmp_path: Path) -> None:
    claim = tmp_path / "spark-x-1.building"
    claim.write_text(json.dumps({"python_pid": 2**22 + 1}))
    cds._finish_a_build(tmp_path, "spark-x-1")
    assert not claim.exists()


_START = """
import sys
from kafkatest.spark import kafka_spark_session
spark = kafka_spark_session(app_name="cds-test")
assert spark.range(3).count() == 3
print("JVM", spark._jvm.java.lang.ProcessHandle.current().pid())
"""


def _start(env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], int]:
    done = subprocess.run(
        [sys.executable, "-c", _START],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **env},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    pid = int(done.stdout.split("JVM", 1)[1].split()[0])
    deadline = time.monotonic() + 300  # the JVM writes the archive as it exits
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return done, pid


def test_the_second_start_maps_what_the_first_wrote(tmp_path: Path) -> None:
    """The first start's JVM writes the archive at exit; the next start checks it, moves
    it into place and maps Spark's classes from it; neither prints a word about it."""
    loads = tmp_path / "class-load.txt"
    env = {
        "KAFKATEST_SPARK_CDS": str(tmp_path / "cds"),
        "KAFKATEST_JVM_FLAGS": (
            f"-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xlog:class+load=info:file={loads}"
        ),
    }
    first, _ = _start(env)
    assert list((tmp_path / "cds").glob("*.part")), "the first start wrote no archive"
    second, _ = _start(env)
    archives = list((tmp_path / "cds").glob("*.jsa"))
    assert len(archives) == 1 and archives[0].stat().st_size > 0
    shared = [
        line for line in loads.read_text().splitlines() if "org.apache.spark.SparkContext " in line
    ]
    assert shared and "shared objects file" in shared[0], shared
    for done in (first, second):
        assert "cds" not in done.stdout + done.stderr
