"""A moved clock cannot leak: what a test does to the shared broker's clock is undone
before the next test, and while it is moved, seeding stamps the broker's time.

The two tests of `test_a_test_moves...` and `test_the_next_test...` run in file order:
the second fails without the plugin's undo (it would inherit a frozen clock two hours
ahead). The seeding tests fail without the broker's time: default timestamps would be
two hours old to the broker, and retention would delete them at its next check.
"""

from __future__ import annotations

import time
import warnings

import pytest

from kafkatest import Broker
from kafkatest.seeding import seed
from kafkatest.seeding.retention import SeedRetentionWarning

pytestmark = pytest.mark.kafka_backends("emulator")
HOUR_MS = 3_600_000


def test_a_test_moves_the_shared_brokers_clock(kafka_broker: Broker) -> None:
    kafka_broker.clock.advance(hours=2)
    kafka_broker.clock.freeze()
    assert kafka_broker.clock.moved and kafka_broker.clock.frozen


def test_the_next_test_starts_on_real_time(kafka_broker: Broker) -> None:
    assert not kafka_broker.clock.moved and not kafka_broker.clock.frozen
    drift_ms = kafka_broker.clock.now_ms() - time.time_ns() // 1_000_000
    assert abs(drift_ms) < HOUR_MS  # not the two hours the test before moved it


def test_seeding_on_a_moved_clock_stamps_the_brokers_time(
    kafka_broker: Broker, kafka_topic
) -> None:
    topic = kafka_topic(config={"retention.ms": str(HOUR_MS)})
    now = kafka_broker.clock.advance(hours=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeedRetentionWarning)  # none: they are new to it
        seeded = seed(kafka_broker, topic, [{"n": 1}, {"n": 2}])
    assert all(
        record.timestamp_ms is not None and record.timestamp_ms >= now for record in seeded.records
    )
    kafka_broker.clock.advance(minutes=10)  # past retention's check: nothing is old enough
    assert kafka_broker.earliest_offsets(topic) == {0: 0}
    assert kafka_broker.latest_offsets(topic) == {0: 2}


def test_a_seed_older_than_retention_by_the_brokers_time_warns(
    kafka_broker: Broker, kafka_topic
) -> None:
    topic = kafka_topic(config={"retention.ms": str(HOUR_MS)})
    now = kafka_broker.clock.advance(hours=2)
    wall = now - 2 * HOUR_MS  # this machine's time: two hours old to the broker
    with pytest.warns(SeedRetentionWarning, match="older than its retention.ms=3600000"):
        seed(kafka_broker, topic, [{"key": "k", "value": {"n": 1}, "timestamp_ms": wall}])


def test_records_with_their_own_timestamps_keep_them_on_a_moved_clock(
    kafka_broker: Broker, kafka_topic
) -> None:
    topic = kafka_topic(config={"retention.ms": "-1"})
    kafka_broker.clock.advance(days=1)
    seeded = seed(
        kafka_broker, topic, [{"key": "k", "value": {"n": 1}, "timestamp_ms": 1_700_000_000_000}]
    )
    assert seeded.records[0].timestamp_ms == 1_700_000_000_000


def test_what_was_due_on_the_moved_clock_is_as_far_ahead_after_the_undo(
    kafka_broker: Broker, kafka_topic
) -> None:
    """Put back on real time, a transaction opened two hours ahead still times out a
    minute later, and the periodic abort still runs (both kept absolute times, which
    moving the clock back left hours in the future)."""
    import uuid

    from confluent_kafka import Producer
    from test_broker_clock import TIMEOUT_S, stable_offset

    topic = kafka_topic()
    kafka_broker.clock.advance(hours=2)
    producer = Producer(
        {
            **kafka_broker.client_config(),
            "transactional.id": f"undo-{uuid.uuid4().hex[:8]}",
            "transaction.timeout.ms": 60_000,
        }
    )
    producer.init_transactions(TIMEOUT_S)
    producer.begin_transaction()
    producer.produce(topic, b"left open", partition=0)
    assert producer.flush(TIMEOUT_S) == 0
    kafka_broker.clock.reset()
    assert stable_offset(kafka_broker, topic) == 0
    kafka_broker.clock.advance(minutes=2)
    assert stable_offset(kafka_broker, topic) == 2  # the record and its abort marker
