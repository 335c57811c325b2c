"""Records seeded older than retention: a warning first, then a report that says why."""

from __future__ import annotations

import time
import warnings

import pytest

from kafkatest.assertions import DeliveryAssertionError, assert_at_least_once
from kafkatest.seeding import seed
from kafkatest.seeding.retention import SeedRetentionWarning

LAST_YEAR_MS = int(time.time() * 1000) - 365 * 24 * 3600 * 1000


def _wait_until_aged_out(broker, topic: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while broker.earliest_offsets(topic) != broker.latest_offsets(topic):
        assert time.monotonic() < deadline, "retention never deleted the old records"
        time.sleep(0.2)


def test_old_timestamps_warn_and_the_report_points_at_retention(kafka_broker, kafka_topic):
    topic = kafka_topic(partitions=2)
    data = [{"value": {"n": i}, "timestamp_ms": LAST_YEAR_MS + i} for i in range(20)]
    with pytest.warns(SeedRetentionWarning, match=r"20 of 20 records .* older than its retention"):
        seeded = seed(kafka_broker, topic, data)
    _wait_until_aged_out(kafka_broker, topic)  # both backends delete them, as Kafka does

    with pytest.raises(DeliveryAssertionError) as failure:
        assert_at_least_once(seeded, [])
    message = str(failure.value)
    for summary in failure.value.report.partitions:
        assert summary.log_start == summary.log_end == summary.seeded
        assert summary.lost_below_log_start == summary.seeded
    assert "lie below the log start: the broker deleted them" in message
    assert "log now holds offsets [" in message


def test_recent_or_unlimited_retention_does_not_warn(kafka_broker, kafka_topic):
    kept = kafka_topic(config={"retention.ms": "-1"})
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeedRetentionWarning)
        seed(kafka_broker, kept, [{"value": {"n": 1}, "timestamp_ms": LAST_YEAR_MS}])
        seed(kafka_broker, kafka_topic(), [{"value": {"n": 1}}])


def test_a_loss_above_the_log_start_is_not_blamed_on_retention(kafka_broker, kafka_topic):
    topic = kafka_topic()
    seeded = seed(kafka_broker, topic, [{"n": i} for i in range(5)])
    with pytest.raises(DeliveryAssertionError) as failure:
        assert_at_least_once(seeded, [])
    (summary,) = failure.value.report.partitions
    assert (summary.log_start, summary.log_end, summary.lost_below_log_start) == (0, 5, 0)
    assert "below the log start" not in str(failure.value)
