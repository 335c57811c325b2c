"""Stopping, restarting and pausing the broker, on every backend that runs one."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import KafkaError, Producer
from kio.schema.errors import ErrorCode

from kafkatest.brokers.base import Broker
from kafkatest.emulator.server.responses import NO_THROTTLE
from kafkatest.faults import Faults
from kafkatest.records import Record
from tests.faults.clients import deliver


def _impatient_producer(bootstrap: str) -> Producer:
    return Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 0,
            "message.timeout.ms": 1500,
            "request.timeout.ms": 1000,
            "enable.idempotence": False,
        }
    )


def test_restart_keeps_topics_and_records(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic(partitions=2)
    placed = kafka_broker.produce(
        Record(topic=topic, value=f"v{i}".encode(), partition=i % 2) for i in range(6)
    )

    kafka_faults.restart()

    assert kafka_faults.active() == []
    read = kafka_broker.consume(topic)
    assert sorted(r.value for r in read) == [f"v{i}".encode() for i in range(6)], (
        f"written at {[(r.partition, r.offset) for r in placed]}, "
        f"read at {[(r.partition, r.offset) for r in read]}; after the restart the log "
        f"starts at {kafka_broker.earliest_offsets(topic)}, ends at "
        f"{kafka_broker.latest_offsets(topic)}"
    )
    [placed] = kafka_broker.produce([Record(topic=topic, value=b"after", partition=0)])
    assert placed.offset == 3


@pytest.mark.kafka_backends("kafka")
def test_a_broker_restarted_from_a_thread_outlives_that_thread(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    """Scenario actions restart the broker from a trigger thread. The JVM's parent-death
    signal follows the thread that forked it, so a JVM forked there was killed as soon as
    the trigger thread ended: every child is forked from one long-lived thread instead."""
    topic = kafka_topic()
    restarter = threading.Thread(target=kafka_faults.restart)
    restarter.start()
    restarter.join()
    pid = getattr(kafka_broker, "pid", None)

    [placed] = kafka_broker.produce([Record(topic=topic, value=b"after", partition=0)])
    assert [r.value for r in kafka_broker.consume(topic)] == [b"after"]
    assert placed.offset == 0
    assert pid is not None and getattr(kafka_broker, "pid", None) == pid, "the same JVM still runs"


def test_a_stopped_broker_refuses_writes_until_started(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic()
    bootstrap = kafka_broker.bootstrap_servers
    kafka_broker.produce([Record(topic=topic, value=b"before", partition=0)])

    kafka_faults.stop()
    assert kafka_faults.active() == [{"kind": "stopped"}]
    producer = _impatient_producer(bootstrap)
    [(err, _offset)] = deliver(producer, topic, [b"while-stopped"])
    assert err is not None and err.code() == KafkaError._MSG_TIMED_OUT

    kafka_faults.start()
    [(err, offset)] = deliver(producer, topic, [b"after"])
    assert err is None and offset == 1
    assert [r.value for r in kafka_broker.consume(topic)] == [b"before", b"after"]


def test_a_paused_broker_times_writes_out_and_serves_them_after_resume(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic()
    producer = _impatient_producer(kafka_broker.bootstrap_servers)
    [(err, _)] = deliver(producer, topic, [b"before"])
    assert err is None

    kafka_faults.pause()
    assert kafka_faults.active() == [{"kind": "pause"}]
    [(err, _)] = deliver(producer, topic, [b"while-paused"])
    assert err is not None and err.code() == KafkaError._MSG_TIMED_OUT

    kafka_faults.resume()
    assert kafka_faults.active() == []
    [(err, offset)] = deliver(producer, topic, [b"after"])
    assert err is None
    values = [r.value for r in kafka_broker.consume(topic)]
    # The timed-out write was already in the broker's socket: it may still land after
    # resume, at most once. On real Kafka it races the next write over a new connection
    # (several network and request threads wake at SIGCONT), so either may come first.
    assert values[0] == b"before" and values[offset] == b"after"
    assert sorted(values[1:]) in ([b"after"], [b"after", b"while-paused"]), values


def test_clear_resumes_and_starts_the_broker(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic()
    kafka_faults.pause()
    kafka_faults.stop()

    kafka_faults.clear()

    assert kafka_faults.active() == []
    [placed] = kafka_broker.produce([Record(topic=topic, value=b"ok", partition=0)])
    assert placed.offset == 0


@pytest.mark.kafka_backends("emulator")
def test_an_answer_without_an_offset_is_asked_again(
    kafka_broker: Broker, kafka_topic: Callable[..., str]
) -> None:
    """Just after a Kafka restart librdkafka's ListOffsets can succeed with no offset
    (-1001) for every partition; reading a topic then skipped the partitions whose end
    came back so. Here the emulator answers "no offset" (-1, no error) twice."""
    topic = kafka_topic(partitions=2)
    kafka_broker.produce([Record(topic=topic, value=b"kept", partition=1)])

    def no_offset(request: Any) -> Any:
        schema = importlib.import_module(type(request).__module__.replace(".request", ".response"))
        partitions = tuple(
            schema.ListOffsetsPartitionResponse(
                partition_index=p.partition_index, error_code=ErrorCode.none
            )
            for p in request.topics[0].partitions
        )
        return schema.ListOffsetsResponse(
            throttle_time=NO_THROTTLE,
            topics=(schema.ListOffsetsTopicResponse(name=topic, partitions=partitions),),
        )

    with kafka_broker.on_request("ListOffsets", no_offset, topic=topic, times=2) as hook:
        assert kafka_broker.latest_offsets(topic) == {0: 0, 1: 1}
        assert hook.calls == 2
    assert [r.value for r in kafka_broker.consume(topic)] == [b"kept"]
