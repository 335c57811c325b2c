"""Class-data-sharing archives of the Kafka JVMs kafkatest starts (its tools, its
broker): the first run of each kind writes one, later runs map it, and nothing about
it reaches a terminal or a tool's output."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from kafkatest.apps.tools import TOPICS, kafka_tools_classpath, run_kafka_tool
from kafkatest.brokers.kafka_process import KafkaProcessBroker
from kafkatest.jars.class_archive import jvm_archive, maps


def _shared_loads(log: Path, class_name: str) -> list[str]:
    """The class-load log's lines for `class_name` (the JVM says where it came from)."""
    return [line for line in log.read_text().splitlines() if f"{class_name} " in line]


@pytest.fixture
def archives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cds"
    monkeypatch.setenv("KAFKATEST_KAFKA_CDS", str(folder))
    return folder


@pytest.fixture
def loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A file where each JVM kafkatest starts logs every class it loads, and from where."""
    log = tmp_path / "class-load.txt"
    monkeypatch.setenv(
        "KAFKATEST_JVM_FLAGS",
        f"-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xlog:class+load=info:file={log}",
    )
    return log


def test_the_second_tool_run_maps_what_the_first_wrote(archives: Path, loads: Path) -> None:
    first = run_kafka_tool(TOPICS, ["--version"])
    assert first.returncode == 0, first.stderr
    assert len(list(archives.glob("kafka-tools-*.jsa"))) == 1
    assert not list(archives.glob("*.part"))  # checked, moved into place
    assert "shared objects file" not in "".join(_shared_loads(loads, TOPICS))

    second = run_kafka_tool(TOPICS, ["--version"])
    assert second.returncode == 0 and second.stdout == first.stdout
    [line] = _shared_loads(loads, TOPICS)
    assert "shared objects file (top)" in line, line
    for done in (first, second):
        assert "cds" not in (done.stdout + done.stderr).lower()
        assert "sharing" not in (done.stdout + done.stderr).lower()


def test_off_writes_and_maps_nothing(archives: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKATEST_KAFKA_CDS", "off")
    assert run_kafka_tool(TOPICS, ["--version"]).returncode == 0
    assert not archives.exists()


def test_a_truncated_archive_is_not_kept(archives: Path, tmp_path: Path) -> None:
    """A part the JVM would not map (a writer killed as it wrote) is dropped, and the
    check runs the real JVM with the part, not merely the JVM."""
    jar = Path(kafka_tools_classpath().split(":")[0])
    plan = jvm_archive("kafka-x", "java", (), [jar], str(archives))
    assert plan.part is not None and plan.archive is not None
    subprocess.run(
        ["java", f"-XX:ArchiveClassesAtExit={plan.part}", "-Xlog:cds*=off", "-version"],
        check=True,
        capture_output=True,
    )
    whole = plan.part.read_bytes()
    assert maps(plan.part, "java", (), "")  # an archive of the JVM's own classes maps
    plan.part.write_bytes(whole[: len(whole) // 2])
    assert not maps(plan.part, "java", (), "")
    plan.exited()
    assert not plan.part.exists() and not plan.archive.exists()


def test_a_restarted_broker_maps_the_archive_its_first_run_wrote(
    archives: Path, loads: Path
) -> None:
    broker = KafkaProcessBroker()
    try:
        broker.start()
        broker.create_topic("kept", partitions=1)
        broker.stop()  # the JVM writes the archive as it exits
        assert len(list(archives.glob("kafka-broker-*.jsa"))) == 1
        assert len(list(archives.glob("kafka-format-*.jsa"))) == 1
        broker.start()
        [line] = _shared_loads(loads, "kafka.Kafka$")
        assert "shared objects file (top)" in line, line
        assert broker.topic_exists("kept")
    finally:
        broker.close()
    assert not list(archives.glob("*.part"))


def test_parts_whose_writer_is_gone_are_removed(archives: Path) -> None:
    archives.mkdir()
    gone = archives / f"kafka-broker-4.1.1-abc.{2**22 + 1}-00ff.part"
    mine = archives / f"kafka-tools-4.1.1-def.{os.getpid()}-00ff.part"
    for part in (gone, mine):
        part.write_bytes(b"part")
    jar = Path(kafka_tools_classpath().split(":")[0])
    plan = jvm_archive("kafka-format-4.1.1", "java", (), [jar], str(archives))
    assert plan.part is not None
    assert not gone.exists() and mine.exists()
