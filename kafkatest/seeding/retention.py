"""Warn before seeding records that retention deletes as soon as they land.

Retention compares a record's timestamp with the broker's clock, so a record seeded
with a ``timestamp_ms`` from last year is aged out within a retention check (half a
second on kafkatest's brokers), on real Kafka as on the emulator. The job then reads
nothing and the delivery report says "lost": this warning says why, before that.
The broker's clock is the emulator's when a test has moved it (`kafka_broker.clock`):
records seeded without a timestamp are then stamped with the broker's time.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import replace

from kafkatest.brokers.broker_clock import broker_now_ms
from kafkatest.brokers.client import ClientOperations
from kafkatest.records import Record


class SeedRetentionWarning(UserWarning):
    """Seeded records are older than the topic's retention and will be deleted at once."""


def stamped_with_broker_time(broker: ClientOperations, records: list[Record]) -> list[Record]:
    """Records without a timestamp stamped with the broker's time when a test has moved
    its clock (`kafka_broker.clock`), so that they are new to the broker: a producer
    stamps the machine's time, which an advanced broker sees as long past (and
    retention deletes at once). Records with their own timestamps keep them."""
    from kafkatest.brokers.capabilities import Capability

    can = getattr(broker, "can", None)
    if not records or can is None or not can(Capability.CLOCK):
        return records
    clock = getattr(broker, "clock")  # noqa: B009 - only brokers with the capability have it
    if not clock.moved:
        return records
    now = clock.now_ms()
    return [r if r.timestamp_ms is not None else replace(r, timestamp_ms=now) for r in records]


def warn_if_older_than_retention(
    broker: ClientOperations, topic: str, records: Sequence[Record]
) -> None:
    """Warn when any record's timestamp lies before now - retention.ms of `topic`."""
    stamped = [r.timestamp_ms for r in records if r.timestamp_ms is not None]
    if not stamped:
        return
    try:
        config = broker.topic_config(topic)
    except Exception:
        return  # the topic does not exist yet (auto-created): the broker default applies
    retention_ms = int(config.get("retention.ms", "604800000"))
    policy = config.get("cleanup.policy", "delete")
    if retention_ms < 0 or "delete" not in policy:
        return
    horizon = broker_now_ms(broker) - retention_ms
    expired = sum(1 for stamp in stamped if stamp < horizon)
    if expired:
        warnings.warn(
            f"{expired} of {len(records)} records seeded to {topic!r} have timestamps older "
            f"than its retention.ms={retention_ms} ({min(stamped)} < now - retention): the "
            "broker deletes them at its next retention check, before a job can read them. "
            "Give the topic a longer retention (kafka_topic(config={'retention.ms': '-1'})), "
            "or seed recent timestamps.",
            SeedRetentionWarning,
            stacklevel=3,
        )
