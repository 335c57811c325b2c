"""`slow_fetch`, the fault added in one declaration (faults/emulator_faults.py): the
Python API, the HTTP control actions, `kafkatest fault` and scenario files all have
it from that declaration, and a real broker refuses it by name."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kafkatest.brokers.base import Broker
from kafkatest.errors import UnsupportedOperation
from kafkatest.faults import Faults
from kafkatest.faults.cli import _OPTIONS
from kafkatest.faults.control_actions import ACTIONS, checked_params, perform
from kafkatest.scenarios.actions import ACTION_PARAMS
from tests.faults.clients import deliver, producer


def test_slow_fetch_is_on_every_surface_from_its_one_declaration() -> None:
    assert ACTIONS["slow_fetch"] == {
        "delay_ms": int,
        "times?": int,
        "topic?": str,
        "partition?": int,
    }
    assert ACTION_PARAMS["slow_fetch"] == (("delay_ms",), ("times", "topic", "partition"))
    assert _OPTIONS["--delay-ms"][0] == "delay_ms"


@pytest.mark.kafka_backends("emulator")
def test_slow_fetch_delays_the_fetches_and_not_the_writes(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic()
    params = checked_params("slow_fetch", {"delay_ms": 50, "topic": topic})
    fault_id = perform(kafka_faults, "slow_fetch", params)

    [(err, offset)] = deliver(producer(kafka_broker), topic, [b"x"])
    assert (err, offset) == (None, 0)
    [rule] = kafka_faults.active()
    assert rule["id"] == fault_id and rule["api"] == "Fetch" and rule["hits"] == 0

    assert [r.value for r in kafka_broker.consume(topic)] == [b"x"]
    [rule] = kafka_faults.active()
    assert rule["hits"] >= 1  # every Fetch for the topic waited first


@pytest.mark.kafka_backends("kafka")
def test_a_real_broker_refuses_slow_fetch_by_name(
    kafka_broker: Broker, kafka_faults: Faults
) -> None:
    with pytest.raises(UnsupportedOperation, match="slow_fetch needs the emulator backend"):
        kafka_faults.slow_fetch(50)
    assert kafka_faults.active() == []
