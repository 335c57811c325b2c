"""Backends other than the session's: container, external, and the real-Kafka process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from kafkatest import Broker, BrokerError, Record, SetupError
from kafkatest.brokers.container import ContainerBroker, docker_engine_problem
from kafkatest.brokers.external import ExternalBroker
from kafkatest.brokers.registry import make_broker
from kafkatest.cli import main as cli_main

NO_DOCKER = docker_engine_problem()


@pytest.mark.skipif(NO_DOCKER is None, reason="a Docker engine is available here")
def test_container_without_docker_fails_at_once() -> None:
    broker = ContainerBroker()
    with pytest.raises(
        SetupError, match=r"container backend needs Docker.*--kafka-backend=emulator"
    ):
        broker.start()


@pytest.mark.docker
@pytest.mark.skipif(NO_DOCKER is not None, reason=f"no Docker engine: {NO_DOCKER}")
def test_container_round_trip() -> None:
    with ContainerBroker() as broker:
        broker.create_topic("t", partitions=2)
        placed = broker.produce([Record.make("t", "v", key="k", partition=1)])
        assert [(r.partition, r.offset) for r in broker.consume("t")] == [(1, placed[0].offset)]


def test_external_backend_uses_the_given_cluster(kafka_broker: Broker, kafka_topic) -> None:
    topic = kafka_topic(partitions=2)
    external = ExternalBroker(kafka_broker.bootstrap_servers)
    external.start()
    try:
        external.produce([Record.make(topic, "x", partition=1)])
        assert external.latest_offsets(topic) == {0: 0, 1: 1}
        with pytest.raises(BrokerError, match="cannot be stopped"):
            external.stop()
    finally:
        external.close()


def test_external_backend_unreachable_fails_fast() -> None:
    broker = ExternalBroker("127.0.0.1:1", connect_timeout_s=2)
    with pytest.raises(BrokerError, match=r"127\.0\.0\.1:1 did not answer metadata"):
        broker.start()


def test_bad_backend_names_the_choices() -> None:
    with pytest.raises(
        BrokerError, match="unknown Kafka backend 'kafkaa'; choose one of emulator, kafka"
    ):
        make_broker("kafkaa")
    with pytest.raises(BrokerError, match="needs --kafka-bootstrap"):
        make_broker("external")


def test_cli_reports_setup_errors_without_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["demo", "--job", "/nonexistent/job.py"]) == 2
    assert "the demo job was not found" in capsys.readouterr().err


def test_real_kafka_restart_keeps_data_and_dies_with_its_parent(tmp_path) -> None:
    """The broker JVM keeps its log across restart, and never outlives a killed test run."""
    script = textwrap.dedent(
        """
        import sys
        from kafkatest.brokers.kafka_process import KafkaProcessBroker
        from kafkatest import Record
        b = KafkaProcessBroker()
        b.start()
        b.create_topic("keep", partitions=1)
        b.produce([Record.make("keep", "v%d" % i) for i in range(3)])
        b.restart()
        print(b.latest_offsets("keep")[0], b._process.pid, flush=True)
        sys.stdin.read()  # wait to be killed
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        line = child.stdout.readline().split()
        assert line and line[0] == "3", "3 records survive the restart"
        jvm_pid = int(line[1])
        os.kill(jvm_pid, 0)  # alive
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(jvm_pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            os.kill(jvm_pid, signal.SIGKILL)
            pytest.fail("the Kafka JVM outlived the killed test process")
    finally:
        if child.poll() is None:
            child.kill()
