"""Topic faults on every backend, observed through librdkafka clients."""

from __future__ import annotations

from collections.abc import Callable

from confluent_kafka import KafkaError, Producer

from kafkatest.brokers.base import Broker
from kafkatest.brokers.client import wait_until
from kafkatest.brokers.client_connections import HELPER_PRODUCER
from kafkatest.faults import Faults
from kafkatest.records import Record
from tests.faults.clients import consumer, first_event


def _write(broker: Broker, topic: str, count: int, partitions: int = 1) -> None:
    broker.produce(
        Record(topic=topic, value=f"v{i}".encode(), partition=i % partitions) for i in range(count)
    )


def test_delete_records_moves_the_log_start_and_strands_a_consumer_below_it(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic()
    _write(kafka_broker, topic, 10)

    assert kafka_faults.delete_records(topic, 4) == {0: 4}

    assert kafka_broker.earliest_offsets(topic) == {0: 4}
    with consumer(kafka_broker, **{"auto.offset.reset": "error"}) as strict:
        event = first_event(strict, topic, 0, 0)
        assert event.error() is not None
        assert event.error().code() == KafkaError._AUTO_OFFSET_RESET
        assert "out of range" in event.error().str().lower()
    with consumer(kafka_broker, **{"auto.offset.reset": "earliest"}) as lenient:
        event = first_event(lenient, topic, 0, 0)
        assert event.error() is None
        assert (event.offset(), event.value()) == (4, b"v4")


def test_delete_records_with_one_offset_moves_every_partition(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic(partitions=3)
    _write(kafka_broker, topic, 12, partitions=3)

    assert kafka_faults.delete_records(topic, 2) == {0: 2, 1: 2, 2: 2}
    assert kafka_faults.delete_records(topic, -1) == {0: 4, 1: 4, 2: 4}
    assert kafka_broker.earliest_offsets(topic) == {0: 4, 1: 4, 2: 4}


def test_recreated_topic_has_a_new_id_and_offsets_from_zero(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic(partitions=2)
    _write(kafka_broker, topic, 6, partitions=2)
    old_id = kafka_faults.topic_id(topic)

    new_id = kafka_faults.recreate_topic(topic, partitions=3)

    assert new_id != old_id
    assert kafka_faults.topic_id(topic) == new_id
    assert kafka_broker.latest_offsets(topic) == {0: 0, 1: 0, 2: 0}
    [placed] = kafka_broker.produce([Record(topic=topic, value=b"after", partition=2)])
    assert placed.offset == 0


def test_recreate_keeps_the_partition_count_unless_told(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic(partitions=2)
    _write(kafka_broker, topic, 4, partitions=2)

    kafka_faults.recreate_topic(topic)

    assert kafka_broker.latest_offsets(topic) == {0: 0, 1: 0}


def test_deleted_topic_is_gone_for_clients(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic()
    _write(kafka_broker, topic, 3)

    kafka_faults.delete_topic(topic)

    # Asking for the topic by name would auto-create it (both brokers allow that).
    assert topic not in kafka_broker.admin().list_topics(timeout=10).topics


def test_a_deleted_topic_stays_deleted_under_the_harness_producer(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    """A producer that refreshes its metadata on a timer asks for every topic it wrote
    to, allowing auto-creation, and so creates a topic deleted under it again (a
    scenario's subscribed source came back mid-test in CI). The harness's producer,
    which every test's seeding shares, refreshes on no timer."""
    topic = kafka_topic()
    _write(kafka_broker, topic, 1)  # through the harness's producer, which keeps the topic
    timed = Producer(
        {
            **kafka_broker.client_config(),
            **HELPER_PRODUCER,
            "topic.metadata.refresh.interval.ms": 200,
        }
    )
    timed.produce(topic, b"v")
    assert timed.flush(30) == 0

    kafka_faults.delete_topic(topic)
    wait_until(lambda: kafka_broker.topic_exists(topic), 30, f"{topic!r} is created again")
    del timed  # destroyed: nothing asks for the topic any more

    assert HELPER_PRODUCER["topic.metadata.refresh.interval.ms"] == -1


def test_aged_out_records_are_gone_and_later_records_stay(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic(partitions=2)
    _write(kafka_broker, topic, 8, partitions=2)
    retention_before = kafka_broker.topic_config(topic)["retention.ms"]

    assert kafka_faults.age_out_records(topic) == {0: 4, 1: 4}

    assert kafka_broker.topic_config(topic)["retention.ms"] == retention_before
    kafka_broker.produce([Record(topic=topic, value=b"later", partition=0)])
    assert [r.value for r in kafka_broker.consume(topic)] == [b"later"]
    with consumer(kafka_broker, **{"auto.offset.reset": "error"}) as strict:
        event = first_event(strict, topic, 1, 0)
        assert event.error() is not None
        assert event.error().code() == KafkaError._AUTO_OFFSET_RESET


def test_added_partitions_take_records(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic()

    kafka_faults.add_partitions(topic, 3)

    assert kafka_broker.partition_count(topic) == 3
    [placed] = kafka_broker.produce([Record(topic=topic, value=b"new", partition=2)])
    assert (placed.partition, placed.offset) == (2, 0)
