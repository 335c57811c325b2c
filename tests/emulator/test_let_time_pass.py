"""`kafka_broker.let_time_pass(seconds)`: the broker's clock where kafkatest holds it
(the emulator: what fell due runs at once), a real wait elsewhere, so that one test of
a timeout runs on every backend without waiting on the emulator."""

from __future__ import annotations

import time

import pytest

from kafkatest import Broker
from kafkatest.brokers.capabilities import Capability


@pytest.mark.kafka_backends("emulator")
def test_on_the_emulator_an_hour_passes_on_the_clock(kafka_broker: Broker) -> None:
    before = kafka_broker.clock.now_ms()
    kafka_broker.let_time_pass(3600)
    assert kafka_broker.clock.now_ms() - before >= 3_600_000


@pytest.mark.kafka_backends("kafka")  # the backends without a clock kafkatest holds
def test_without_a_clock_it_waits_the_time_out(kafka_broker: Broker) -> None:
    assert not kafka_broker.can(Capability.CLOCK)
    started = time.monotonic()
    kafka_broker.let_time_pass(0.2)
    assert time.monotonic() - started >= 0.2  # a lower bound only
