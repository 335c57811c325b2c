"""Seeding duplicates on purpose: the delivery assertions expect each identity once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from oracle_jobs import PAYMENTS

from kafkatest.assertions import DeliveryAssertionError, assert_exactly_once
from kafkatest.brokers.base import Broker
from kafkatest.seeding import seed

#: The oracles' own logic: the broker only feeds the job. The docs example
#: (test_docs_example.py) and the catch matrix run the oracles on real Kafka too.
pytestmark = pytest.mark.kafka_backends("emulator")


def _sink(*ids: str) -> list[dict[str, Any]]:
    """Sink rows of a dedup job: one payment per row, found by its payment_id."""
    return [{"key": pid, "value": {"payment_id": pid}} for pid in ids]


def test_a_repeated_identity_is_refused_unless_duplicates_are_allowed(
    kafka_broker: Broker, kafka_topic: Callable[..., str]
) -> None:
    topic = kafka_topic(partitions=2)
    with pytest.raises(ValueError, match=r"'p2' is used twice.*duplicates=\"allow\""):
        seed(kafka_broker, topic, PAYMENTS, id_field="payment_id")

    seeded = seed(kafka_broker, topic, PAYMENTS, id_field="payment_id", duplicates="allow")
    assert len(seeded) == 10 and seeded.ids.count("p2") == 2
    assert seeded.where("p2").offset < seeded.records[4].offset  # where() names the first copy


def test_exactly_once_means_once_per_identity_and_names_the_seeded_copies(
    kafka_broker: Broker, kafka_topic: Callable[..., str]
) -> None:
    topic = kafka_topic(partitions=2)
    seeded = seed(kafka_broker, topic, PAYMENTS, id_field="payment_id", duplicates="allow")
    origins: dict[str, list[str]] = {}
    for rid, record in zip(seeded.ids, seeded.records, strict=True):
        origins.setdefault(rid, []).append(f"{topic}[{record.partition}]@{record.offset}")

    report = assert_exactly_once(seeded, _sink(*(f"p{n}" for n in range(1, 9))))
    assert report.expected == 8 and report.seen == 8

    with pytest.raises(DeliveryAssertionError) as caught:
        assert_exactly_once(seeded, _sink("p1", "p2", "p2", "p3", "p4", "p6", "p7", "p8"))
    report = caught.value.report
    (duplicated,) = report.duplicated
    (missing,) = report.missing
    assert duplicated.id == "p2" and duplicated.seen == 2 and duplicated.expected == 1
    assert missing.id == "p5"
    message = str(caught.value)
    assert f"id p2 seeded 2x at {', '.join(origins['p2'])}" in message
    assert f"id p5 seeded 2x at {', '.join(origins['p5'])}" in message
    # Both copies of each identity are drawn in the per-partition picture.
    assert sum(p.seeded for p in report.partitions) == 10
