"""`kafka_broker.on_request(api, fn, ...)`: the test's function answers requests.

(test_request_hook_example.py: one Fetch answered OFFSET_OUT_OF_RANGE reaches the
client.) A hook's topic and client id narrow what it sees, DROP closes the
connection (the client retries), HOLD waits for `release_held`, a hook that raises
costs one connection and keeps its error, bad arguments are refused, and the `kafka`
backend refuses hooks.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from kafkatest import Broker
from kafkatest.emulator.control import InvalidFault
from kafkatest.emulator.control.request_hooks import DELAY, DROP, HOLD
from kafkatest.errors import UnsupportedOperation

TIMEOUT_S = 30
emulator_only = pytest.mark.kafka_backends("emulator")


def produce_one(broker: Broker, topic: str) -> None:
    producer = Producer(broker.client_config())
    producer.produce(topic, b"v", partition=0)
    assert producer.flush(TIMEOUT_S) == 0


def first_poll(broker: Broker, topic: str) -> Any:
    consumer = Consumer(
        {
            **broker.client_config(),
            "group.id": f"g-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "error",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    try:
        return consumer.poll(TIMEOUT_S)
    finally:
        consumer.close()


@emulator_only
def test_a_hook_sees_only_its_client_and_delay_lets_the_request_through(
    kafka_broker: Broker, kafka_topic
) -> None:
    topic = kafka_topic()
    calls: list[str] = []
    with (
        kafka_broker.on_request(
            "Produce", lambda request: calls.append("other") or DROP, client_id="someone-else"
        ),
        kafka_broker.on_request("Produce", lambda request: DELAY(0)),
    ):
        produce_one(kafka_broker, topic)
    assert calls == []
    assert kafka_broker.latest_offsets(topic) == {0: 1}


@emulator_only
def test_hold_waits_for_release(kafka_broker: Broker, kafka_topic) -> None:
    topic = kafka_topic()
    producer = Producer({**kafka_broker.client_config(), "message.send.max.retries": 0})
    with kafka_broker.on_request("Produce", lambda request: HOLD, topic=topic) as hook:
        producer.produce(topic, b"held", partition=0)
        deadline = time.monotonic() + TIMEOUT_S
        while hook.calls == 0 and time.monotonic() < deadline:
            producer.poll(0.05)
        assert hook.calls == 1
        assert len(producer) == 1  # sent, not answered: held
        kafka_broker.release_held()
        assert producer.flush(TIMEOUT_S) == 0
    assert kafka_broker.latest_offsets(topic) == {0: 1}


@emulator_only
def test_drop_closes_the_connection_and_the_client_retries(
    kafka_broker: Broker, kafka_topic
) -> None:
    topic = kafka_topic()
    with kafka_broker.on_request("Produce", lambda request: DROP, topic=topic, times=1) as hook:
        produce_one(kafka_broker, topic)
    assert hook.calls == 1
    assert kafka_broker.latest_offsets(topic) == {0: 1}


@emulator_only
def test_a_hook_that_raises_costs_one_connection_and_keeps_its_error(
    kafka_broker: Broker, kafka_topic
) -> None:
    topic = kafka_topic()

    def broken(request: Any) -> None:
        raise RuntimeError("the test's own bug")

    with kafka_broker.on_request("Produce", broken, topic=topic, times=1) as hook:
        produce_one(kafka_broker, topic)  # librdkafka retries on a new connection
    assert [str(error) for error in hook.errors] == ["the test's own bug"]
    assert kafka_broker.latest_offsets(topic) == {0: 1}


@emulator_only
def test_bad_hooks_are_refused(kafka_broker: Broker) -> None:
    with pytest.raises(InvalidFault, match="did you mean Fetch"):
        kafka_broker.on_request("Fetchh", lambda request: None)
    with pytest.raises(InvalidFault, match="function"):
        kafka_broker.on_request("Fetch", "not callable")  # type: ignore[arg-type]
    with pytest.raises(InvalidFault, match="positive"):
        kafka_broker.on_request("Fetch", lambda request: None, times=0)
    with pytest.raises(InvalidFault, match="DELAY"):
        DELAY(-1)


@pytest.mark.kafka_backends("kafka")
def test_the_kafka_backend_refuses_request_hooks(kafka_broker: Broker) -> None:
    with pytest.raises(UnsupportedOperation, match=r"cannot hook.*kafka_faults"):
        kafka_broker.on_request("Fetch", lambda request: None)


def _metadata(broker: Broker, topic: str) -> Any:
    """Metadata of a fresh client, asked again when the connection was closed on it (a
    hook that raised costs the request its connection); raises if no answer comes."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    for _ in range(2):
        try:
            return admin.list_topics(topic, timeout=TIMEOUT_S)
        except KafkaException:
            continue
    return admin.list_topics(topic, timeout=TIMEOUT_S)


@emulator_only
def test_a_hook_may_move_the_clock_and_read_the_state(kafka_broker: Broker, kafka_topic) -> None:
    """Issue 44: the hook runs on the broker's own thread; a call that waited for that
    thread (the clock, `call`) froze every client 30 s and ended in a bare TimeoutError.
    Such calls now run at once, where the hook runs."""
    topic = kafka_topic()
    clock = kafka_broker.clock
    before = clock.freeze()
    seen: list[int] = []

    def advance(request: Any) -> None:
        seen.append(clock.advance(seconds=1))
        seen.append(kafka_broker.call(lambda: len(kafka_broker.state.topics.get(topic).partitions)))

    try:
        with kafka_broker.on_request("Metadata", advance, times=1) as hook:
            assert topic in _metadata(kafka_broker, topic).topics
        assert hook.errors == []
        assert seen == [before + 1_000, 1]
        assert clock.now_ms() == before + 1_000
    finally:
        clock.resume()  # the session's broker: its clock runs again for the next tests


@emulator_only
def test_a_hook_that_needs_a_client_is_refused_at_once(kafka_broker: Broker, kafka_topic) -> None:
    """A Kafka client (the harness's produce, its admin) or a broker restart from a hook
    would wait on the thread the hook holds: refused with a reason, and kept."""
    from kafkatest.records import Record

    topic = kafka_topic()
    attempts = [
        lambda request: kafka_broker.produce([Record(topic, b"from a hook")]),
        lambda request: kafka_broker.latest_offsets(topic),
        lambda request: kafka_broker.stop_node(1),
    ]
    for attempt in attempts:
        with kafka_broker.on_request("Metadata", attempt, times=1) as hook:
            # The hook's request loses its connection; the client retries and is served.
            assert topic in _metadata(kafka_broker, topic).topics
        [error] = hook.errors
        assert isinstance(error, RuntimeError)
        assert "request hook" in str(error) and "from the test" in str(error)
    assert kafka_broker.latest_offsets(topic) == {0: 0}
