"""The fault rules are request hooks: one list in `InjectedFaults`, one loop over it.

A rule (`kafka_faults.inject_error`, `add_latency`...) is wrapped in a hook whose
function answers as the rule says; the test's own hooks still come first, latencies
next, then the first other rule that matches, and a rule's `hits` and `times` are
its hook's."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer
from kio.schema.errors import ErrorCode

from kafkatest import Broker
from kafkatest.emulator.control.hook import InjectedFaults, rule_hook
from kafkatest.emulator.control.request_hooks import DECIDES, DELAYS, FIRST, RequestHook
from kafkatest.emulator.control.rules import Rule

TIMEOUT_S = 30


def test_each_rule_is_a_hook_in_the_one_list() -> None:
    faults = InjectedFaults()
    latency = faults.add(Rule(kind="latency", api_key=0, delay_ms=5))
    error = faults.add(
        Rule(kind="error", api_key=0, error=ErrorCode.not_leader_or_follower, times=1)
    )
    mine = faults.add_hook(RequestHook("Produce", lambda request: None))
    hooks = faults._hooks
    assert [hook.rule for hook in hooks] == [latency, error, None]
    assert [hook.phase for hook in hooks] == [DELAYS, DECIDES, FIRST]
    assert faults.rules() == [latency, error]
    assert faults.remove(error.id) and faults.rules() == [latency]
    assert mine in faults._hooks
    assert rule_hook(Rule(kind="lose_ack", api_key=0)).phase == DECIDES


@pytest.mark.kafka_backends("emulator")
def test_a_tests_hook_sees_the_request_a_rule_then_answers(
    kafka_broker: Broker, kafka_topic, kafka_faults
) -> None:
    topic = kafka_topic()
    fault_id = kafka_faults.inject_error("Produce", "INVALID_RECORD", times=1, topic=topic)
    seen: list[int] = []
    with kafka_broker.on_request("Produce", lambda request: seen.append(1), topic=topic):
        producer = Producer({**kafka_broker.client_config(), "retries": 0, "acks": "all"})
        reports: list[object] = []
        producer.produce(topic, b"v", partition=0, on_delivery=lambda e, m: reports.append(e))
        producer.flush(TIMEOUT_S)
    (error,) = reports
    assert error is not None and "INVALID_RECORD" in str(error)
    assert seen == [1]  # added after the rule, consulted before it
    assert fault_id not in [rule.get("id") for rule in kafka_faults.active()]  # spent
