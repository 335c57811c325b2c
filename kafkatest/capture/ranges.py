"""Which offsets of which partitions a capture reads: by offsets, by time, or around a
consumer group's committed offsets ("what my job was reading when it failed").

Every range is half-open, ``[start, end)``, as Kafka's own offsets are; the end defaults to
each partition's end when the capture starts, so a topic still being written to does not
keep the capture running.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from kafkatest.errors import KafkaTestError
from kafkatest.limits import MAX_CLOCK_MS

TP = tuple[str, int]


class CaptureError(KafkaTestError):
    """A capture cannot run as asked (a bad option, an unknown topic, a refused read)."""


@dataclass(frozen=True)
class Selection:
    """The options that choose offsets (``--from/--to/--since/--until/--group``)."""

    start: str = "earliest"
    end: str | None = None
    since: str | None = None
    until: str | None = None
    group: str | None = None
    before: int = 0
    after: int = 0


def time_ms(text: str) -> int:
    """Milliseconds since the epoch from ``1700000000000`` or an ISO time (UTC if no zone),
    at most `limits.MAX_CLOCK_MS` (the end of year 9999)."""
    if text.isascii() and text.isdigit():
        if len(text) > len(str(MAX_CLOCK_MS)) or int(text) > MAX_CLOCK_MS:
            raise CaptureError(
                f"{text[:30]!r} is after the end of year 9999 ({MAX_CLOCK_MS} ms): give "
                "epoch milliseconds (13 digits today) or ISO 8601 (2024-05-01T12:00)"
            )
        return int(text)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise CaptureError(
            f"{text[:60]!r} is not a time: give epoch milliseconds or ISO 8601 (2024-05-01T12:00)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    try:
        return int(moment.timestamp() * 1000)
    except (OverflowError, ValueError, OSError):
        raise CaptureError(f"{text!r} is outside the times Kafka records") from None


def per_partition(text: str, option: str, partitions: list[TP]) -> dict[TP, int]:
    """``{"0": 5}`` (every topic) or ``{"topic": {"0": 5}}`` as offsets per partition."""
    try:
        data = json.loads(text)
    except ValueError:
        raise CaptureError(
            f"{option} {text!r}: give earliest, latest-N or JSON such as '{{\"0\": 1200000}}'"
        ) from None
    if not isinstance(data, dict):
        raise CaptureError(f"{option} {text!r}: a JSON object of partition -> offset")
    out: dict[TP, int] = {}
    for topic, partition in partitions:
        value: Any = data.get(topic, data)
        value = value.get(str(partition)) if isinstance(value, dict) else None
        if isinstance(value, int):
            out[(topic, partition)] = value
    unknown = set(data) - {t for t, _ in partitions} - {str(p) for _, p in partitions}
    if unknown:
        raise CaptureError(f"{option}: no such topic or partition: {', '.join(sorted(unknown))}")
    return out


def resolve(
    consumer: Consumer, partitions: list[TP], selection: Selection, config: dict[str, Any]
) -> dict[TP, tuple[int, int]]:
    """``[start, end)`` per partition for `selection`, empty ranges left out."""
    low_high = {tp: _watermarks(consumer, tp) for tp in partitions}
    start = {tp: low for tp, (low, _) in low_high.items()}
    end = {tp: high for tp, (_, high) in low_high.items()}
    if selection.start.startswith("latest-"):
        count = _count(selection.start[len("latest-") :], "--from latest-N")
        start = {tp: max(low_high[tp][0], end[tp] - count) for tp in partitions}
    elif selection.start != "earliest":
        start.update(per_partition(selection.start, "--from", partitions))
    if selection.end not in (None, "latest"):
        end.update(per_partition(selection.end, "--to", partitions))
    if selection.since:
        start = _by_time(consumer, start, time_ms(selection.since), end)
    if selection.until:
        end = _by_time(consumer, end, time_ms(selection.until), end)
    if selection.group:
        committed = _committed(selection.group, partitions, config)
        for tp, offset in committed.items():
            start[tp] = max(low_high[tp][0], offset - selection.before)
            end[tp] = min(low_high[tp][1], offset + selection.after)
        start = {tp: v for tp, v in start.items() if tp in committed}
    return {
        tp: (max(start[tp], low_high[tp][0]), min(end[tp], low_high[tp][1]))
        for tp in partitions
        if tp in start and max(start[tp], low_high[tp][0]) < min(end[tp], low_high[tp][1])
    }


def _count(text: str, option: str) -> int:
    if not text.isdigit():
        raise CaptureError(f"{option}: N must be a number of records, not {text!r}")
    return int(text)


def _watermarks(consumer: Consumer, tp: TP) -> tuple[int, int]:
    low, high = consumer.get_watermark_offsets(TopicPartition(*tp), timeout=30)
    return int(low), int(high)


def _by_time(
    consumer: Consumer, fallback: dict[TP, int], moment: int, end: dict[TP, int]
) -> dict[TP, int]:
    """The first offset at or after `moment` per partition (the end when none is)."""
    asked = [TopicPartition(t, p, moment) for t, p in fallback]
    found = consumer.offsets_for_times(asked, timeout=30)
    out = dict(fallback)
    for tp in found:
        key = (tp.topic, tp.partition)
        out[key] = end[key] if tp.offset < 0 else tp.offset
    return out


def _committed(group: str, partitions: list[TP], config: dict[str, Any]) -> dict[TP, int]:
    """The group's committed offsets, asked without joining it (OffsetFetch only)."""
    reader = Consumer({**config, "group.id": group, "enable.auto.commit": False})
    try:
        found = reader.committed([TopicPartition(t, p) for t, p in partitions], timeout=30)
    finally:
        reader.close()
    committed = {(tp.topic, tp.partition): tp.offset for tp in found if tp.offset >= 0}
    if not committed:
        raise CaptureError(f"group {group!r} has no committed offset on these partitions")
    return committed
