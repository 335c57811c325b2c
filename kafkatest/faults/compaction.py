"""Making a compacted topic compact now, on a broker that decides that for itself.

Kafka's cleaner never touches a partition's active segment, and a segment rolls only
when a write arrives (by `segment.ms` / `segment.bytes`). So to compact what has been
written so far, the topic gets `segment.ms=1` and `min.cleanable.dirty.ratio=0` for a
moment, and one marker record (a tombstone under `COMPACT_NOW_KEY`) goes to each
partition: it rolls the segment, and the cleaner (kafkatest runs Kafka with a 500 ms
cleaner backoff) cleans everything below it. The emulator does the same roll and
marker and runs its cleaner at once, so offsets and records agree on both backends.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Protocol

from kafkatest.brokers.base import Broker
from kafkatest.brokers.client import wait_until
from kafkatest.emulator import COMPACT_NOW_KEY
from kafkatest.errors import BrokerError
from kafkatest.records import Record

#: The settings that make Kafka roll on the marker and clean right after.
_PROMPT_SETTINGS = {"segment.ms": "1", "min.cleanable.dirty.ratio": "0"}


def targets(
    marker_offsets: Mapping[int, int], until: int | Mapping[int, int] | None
) -> dict[int, int]:
    """Per partition, the offset the cleaner must reach: `until`, or the marker's offset."""
    if until is None:
        return dict(marker_offsets)
    if isinstance(until, int):
        return dict.fromkeys(marker_offsets, until)
    return {p: until[p] for p in marker_offsets if p in until}


def check_compacted(topic: str, reached: Mapping[int, int], wanted: Mapping[int, int]) -> None:
    short = {p: reached.get(p) for p, offset in wanted.items() if reached.get(p, -1) < offset}
    if short:
        raise BrokerError(
            f"the cleaner compacted {topic!r} only up to offsets {short}, not {dict(wanted)}: "
            "min.compaction.lag.ms holds back segments with recent records, and an open "
            "transaction holds back everything after it; pass until= to wait for less"
        )


def require_compacted_topic(broker: Broker, topic: str) -> None:
    policy = broker.topic_config(topic).get("cleanup.policy", "")
    if "compact" not in [p.strip() for p in policy.split(",")]:
        raise BrokerError(
            f"topic {topic!r} has cleanup.policy={policy}: compaction needs "
            "cleanup.policy=compact (or compact,delete)"
        )


class LocalKafka(Protocol):
    """What kafkatest can see of a Kafka broker it runs itself (`KafkaProcess`)."""

    def cleaner_checkpoints(self) -> Mapping[tuple[str, int], int]: ...
    def segment_bases(self, topic: str, partition: int) -> list[int]: ...
    def broker_log_size(self) -> int: ...
    def broker_log_text(self, since: int = 0) -> str: ...


def _wait_applied(local: LocalKafka, topic: str, since: int, timeout_s: float) -> None:
    """Until the broker applied the settings to its logs. DescribeConfigs shows a change
    before the log manager takes it; the broker logs "Updating topic T with new
    configuration" just before handing it over, so after that line a short pause suffices."""
    head = f"Updating topic {topic} with new configuration : "
    wanted = [
        re.compile(rf"(?:^|,){re.escape(k)} -> {re.escape(v)}(?:,|$)")
        for k, v in _PROMPT_SETTINGS.items()
    ]

    def logged() -> bool:
        for line in local.broker_log_text(since).splitlines():
            _, found, props = line.partition(head)
            props = props.rsplit(" (kafka.", 1)[0]
            if found and all(w.search(props) for w in wanted):
                return True
        return False

    wait_until(logged, timeout_s, f"Kafka applies {_PROMPT_SETTINGS} to {topic!r}")
    time.sleep(0.2)


def compact_on_kafka(
    broker: Broker,
    local: LocalKafka,
    topic: str,
    until: int | Mapping[int, int] | None,
    roll: bool,
    timeout_s: float,
) -> dict[int, int]:
    """Roll every partition with a marker (if `roll`) and wait until the cleaner's
    checkpoint passes the wanted offsets; the topic's own settings are put back after."""
    require_compacted_topic(broker, topic)
    overrides = broker.topic_config_overrides(topic)
    since = local.broker_log_size()
    already = all(overrides.get(k) == v for k, v in _PROMPT_SETTINGS.items())
    if not already:
        broker.alter_topic_config(topic, _PROMPT_SETTINGS)
    try:
        if not already:
            _wait_applied(local, topic, since, timeout_s)
        if roll:
            partitions = broker.partition_count(topic)
            placed = broker.produce(
                Record(topic=topic, value=None, key=COMPACT_NOW_KEY, partition=p)
                for p in range(partitions)
            )
            ends = {
                r.partition: r.offset
                for r in placed
                if r.partition is not None and r.offset is not None
            }
            unrolled = {p: o for p, o in ends.items() if o not in local.segment_bases(topic, p)}
            if unrolled:
                raise BrokerError(
                    f"Kafka did not roll a new segment at the compact_now markers {unrolled} of "
                    f"{topic!r} (segment.ms=1 measures from the segment's first record "
                    "timestamp: records timestamped in the future delay the roll)"
                )
        else:
            ends = broker.latest_offsets(topic)
        wanted = targets(ends, until)
        deadline = time.monotonic() + timeout_s
        while True:
            known = local.cleaner_checkpoints()
            reached = {p: known.get((topic, p), -1) for p in wanted}
            if all(reached[p] >= offset for p, offset in wanted.items()):
                return reached
            if time.monotonic() > deadline:
                check_compacted(topic, reached, wanted)
            time.sleep(0.1)
    finally:
        restore = {k: v for k, v in overrides.items() if k in _PROMPT_SETTINGS}
        if restore:
            broker.alter_topic_config(topic, restore)
        broker.reset_topic_config(topic, [k for k in _PROMPT_SETTINGS if k not in overrides])
