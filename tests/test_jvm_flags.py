"""The JVMs kafkatest starts for tests get the quick-start flags, declared once.

`kafkatest.config.jvm_flags_for_tests` is the one place: the kafka backend's broker,
Spark's driver and Kafka's tools all take it, and ``KAFKATEST_JVM_FLAGS`` replaces it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkatest.brokers.kafka_process import KafkaProcessBroker
from kafkatest.config import QUICK_START_JVM_FLAGS, jvm_flags_for_tests
from kafkatest.jars.class_archive import JvmArchive


def test_the_default_is_the_quick_start_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAFKATEST_JVM_FLAGS", raising=False)
    assert jvm_flags_for_tests() == QUICK_START_JVM_FLAGS
    assert "-XX:TieredStopAtLevel=1" in QUICK_START_JVM_FLAGS


@pytest.mark.parametrize(
    ("given", "flags"),
    [("", ()), ("-Xint", ("-Xint",)), ("-XX:+UseG1GC  -Dx='a b'", ("-XX:+UseG1GC", "-Dx=a b"))],
)
def test_the_environment_replaces_the_flags(
    monkeypatch: pytest.MonkeyPatch, given: str, flags: tuple[str, ...]
) -> None:
    monkeypatch.setenv("KAFKATEST_JVM_FLAGS", given)
    assert jvm_flags_for_tests() == flags


def test_the_kafka_backend_command_carries_them_unless_the_broker_says_otherwise(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KAFKATEST_JVM_FLAGS", "-XX:+UseParallelGC")
    broker = KafkaProcessBroker()
    broker._workdir, broker._classpath = tmp_path, "kafka.jar"  # what start() would set
    assert "-XX:+UseParallelGC" in broker._java_command("java", JvmArchive(), "kafka.Kafka")
    broker.jvm_flags = ("-XX:+UseG1GC",)  # the bench's choice: Kafka as deployed
    command = broker._java_command("java", JvmArchive(), "kafka.Kafka")
    assert "-XX:+UseG1GC" in command and "-XX:+UseParallelGC" not in command


def test_the_spark_driver_runs_with_them(spark_session) -> None:
    runtime = spark_session._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
    arguments = list(runtime.getInputArguments())
    for flag in jvm_flags_for_tests():
        assert flag in arguments


@pytest.mark.kafka_backends("kafka")
def test_the_kafka_broker_jvm_runs_with_them(kafka_broker) -> None:
    pid = kafka_broker.jvm_pid if hasattr(kafka_broker, "jvm_pid") else kafka_broker.pid
    command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    for flag in jvm_flags_for_tests():
        assert flag.encode() in command
