"""Request timings: where a request's time goes inside the emulator (opt-in)."""

from __future__ import annotations

import subprocess
import sys
import time

from confluent_kafka import KafkaException, Producer

from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.brokers.process import free_port

PRODUCE, METADATA = 0, 3


def test_recorded_timings_account_for_every_request_by_phase() -> None:
    broker = EmulatorBroker()
    broker.start()
    try:
        timings = broker.record_timings()
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0})
        for index in range(20):
            producer.produce("timed", str(index).encode())
            producer.flush(10)
        produce = timings.by_api[PRODUCE]
        # A request is recorded once its reply is written: the client may see the
        # last reply a moment before that.
        deadline = time.monotonic() + 10
        while produce.requests < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert produce.requests >= 20
        assert all(produce.totals[phase] >= 0 for phase in ("queued", "handled", "written"))
        # Each flush waits for the reply, then the client sends the next one: idle time.
        assert produce.totals["idle"] > 0
        assert timings.by_api[METADATA].requests >= 1
        header, *rows = timings.summary()
        assert header.startswith("api_key requests queued_total_s")
        assert any(row.split()[0] == str(PRODUCE) for row in rows)
    finally:
        broker.close()


def test_the_standalone_emulator_prints_its_timings_when_stopped() -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "kafkatest.cli", "emulator", "--port", str(port), "--timings"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        producer = Producer({"bootstrap.servers": f"127.0.0.1:{port}"})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if producer.list_topics(timeout=1).brokers:
                    break
            except KafkaException:  # not listening yet
                time.sleep(0.1)
        producer.produce("timed", b"x")
        assert producer.flush(30) == 0
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=30)
    assert "kafkatest emulator: request timings (seconds; longest in ms)" in output
    assert any(line.split()[:1] == [str(PRODUCE)] for line in output.splitlines()), output
