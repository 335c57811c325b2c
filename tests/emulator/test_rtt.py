"""`kafka_broker.rtt_ms` / `set_rtt(ms, broker_id=)`: every answer of the emulated
broker waits out a round-trip time (librdkafka's mock cluster's per-broker rtt).

Only lower bounds on time are asserted (no answer before the delay), never an upper
one; the kafka backend refuses it with what to do instead."""

from __future__ import annotations

import time

import pytest
from confluent_kafka.admin import AdminClient

from kafkatest import Broker
from kafkatest.emulator.control.errors import InvalidFault
from kafkatest.errors import BrokerError, UnsupportedOperation

RTT_MS = 300
emulator_only = pytest.mark.kafka_backends("emulator")


@emulator_only
def test_no_answer_leaves_before_the_round_trip_time(kafka_broker: Broker, kafka_topic) -> None:
    topic = kafka_topic()
    admin = AdminClient(kafka_broker.client_config())
    admin.list_topics(topic, timeout=30)  # connected: what follows is one request
    kafka_broker.rtt_ms = RTT_MS
    assert kafka_broker.rtt_ms == RTT_MS
    kafka_broker.record_requests()
    try:
        sent = time.monotonic()
        sent_ms = kafka_broker.clock.now_ms()
        assert topic in admin.list_topics(topic, timeout=30).topics
        took = time.monotonic() - sent
        # Other clients of the session's shared broker may ask for metadata meanwhile:
        # this test's request is the first that names its topic.
        metadata = next(
            e
            for e in kafka_broker.requests(api="Metadata")
            if any(t.get("name") == topic for t in e.request["topics"] or ())
        )
    finally:
        kafka_broker.stop_recording_requests()
        kafka_broker.rtt_ms = 0
    assert took >= RTT_MS / 1000
    assert metadata.time_ms - sent_ms >= RTT_MS  # logged when answered, on the broker clock
    assert kafka_broker.rtt_ms == 0


@emulator_only
def test_a_bad_round_trip_time_or_node_is_refused(kafka_broker: Broker) -> None:
    for bad in (-1, True, "50", 3_600_000):
        with pytest.raises(InvalidFault, match="rtt_ms must be a number of milliseconds"):
            kafka_broker.rtt_ms = bad  # type: ignore[assignment]
    with pytest.raises(BrokerError, match="no emulated broker 99"):
        kafka_broker.set_rtt(50, broker_id=99)
    assert kafka_broker.rtt_ms == 0


def test_a_tests_round_trip_time_ends_with_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_sets_it(kafka_broker):
            kafka_broker.set_rtt(40, broker_id=kafka_broker.broker_ids[0])
            kafka_broker.rtt_ms = 50

        def test_sees_none(kafka_broker):
            assert kafka_broker.rtt_ms == 0
            assert kafka_broker.faults.rtt_ms(kafka_broker.broker_ids[0]) == 0
        """
    )
    result = pytester.runpytest_inprocess("--kafka-backend=emulator", "-p", "no:randomly")
    result.assert_outcomes(passed=2)


@pytest.mark.kafka_backends("kafka")
def test_the_kafka_backend_refuses_a_round_trip_time(kafka_broker: Broker) -> None:
    with pytest.raises(UnsupportedOperation, match=r"cannot delay.*add_latency"):
        kafka_broker.rtt_ms = 50
    with pytest.raises(UnsupportedOperation, match=r"cannot delay.*kafka_backends"):
        kafka_broker.set_rtt(50, broker_id=1)
    with pytest.raises(UnsupportedOperation, match=r"cannot delay"):
        _ = kafka_broker.rtt_ms


def test_a_nodes_own_round_trip_time_wins_over_the_brokers() -> None:
    from kafkatest.emulator.control.hook import InjectedFaults

    control = InjectedFaults()
    control.set_rtt(50)
    control.set_rtt(300, broker_id=2)
    assert (control.rtt_ms(1), control.rtt_ms(2)) == (50, 300)
    control.set_rtt(0, broker_id=2)
    assert (control.rtt_ms(1), control.rtt_ms(2)) == (50, 50)
    control.set_rtt(0)
    assert (control.rtt_ms(1), control.rtt_ms(2)) == (0, 0)
