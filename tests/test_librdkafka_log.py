"""librdkafka's log lines reach Python logging, with its own retries kept at DEBUG."""

from __future__ import annotations

import logging
import socket

import pytest
from confluent_kafka import Producer

from kafkatest.brokers.client_connections import _LIBRDKAFKA_LOG


def test_a_retry_is_debug_and_other_warnings_stay(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="kafkatest.librdkafka")
    retry = (
        "Failed to acquire idempotence PID from broker 1: Coordinator load in progress: retrying"
    )
    _LIBRDKAFKA_LOG.log(logging.WARNING, "%s [%s] %s", "GETPID", "kafkatest#producer-1", retry)
    _LIBRDKAFKA_LOG.log(logging.WARNING, "%s [%s] %s", "FAIL", "kafkatest#producer-1", "down")
    levels = {record.getMessage().split()[0]: record.levelno for record in caplog.records}
    assert levels == {"GETPID": logging.DEBUG, "FAIL": logging.WARNING}


def test_confluent_kafka_logs_through_it(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]  # closed again below: nothing listens there
    caplog.set_level(logging.DEBUG, logger="kafkatest.librdkafka")
    producer = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "logger": _LIBRDKAFKA_LOG})
    try:
        for _ in range(30):
            producer.poll(0.1)
            if any(r.name == "kafkatest.librdkafka" for r in caplog.records):
                break
    finally:
        producer.flush(0)
    assert any(
        "127.0.0.1" in r.getMessage() for r in caplog.records if r.name == "kafkatest.librdkafka"
    )
