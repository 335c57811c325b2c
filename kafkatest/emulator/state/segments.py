"""Log segments: where a partition's log is cut, and when Kafka cuts it.

A segment is bookkeeping over a run of the log's batches (the batches stay in
the log's flat lists, so reads never look at segments). The last segment is the
active one: the cleaner never touches it and retention deletes whole segments.
Kafka checks whether to roll only when a batch is appended (`LogSegment.shouldRoll`),
by size or by how far the incoming batch's timestamp is from the segment's first
batch; no timer rolls an idle segment.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

NO_TIMESTAMP = -1
#: Kafka's segment.bytes is an int, segment.ms a long.
_MAX_INT = 2**31 - 1
_MAX_LONG = 2**63 - 1


@dataclass(frozen=True, slots=True)
class RollLimits:
    """A topic's roll settings: segment.bytes (or internal.segment.bytes), segment.ms,
    segment.jitter.ms, as Kafka's LogConfig derives them."""

    segment_bytes: int = _MAX_INT
    #: Kafka's maxSegmentMs: segment.ms, or max.compaction.lag.ms if smaller on a
    #: compacted topic.
    segment_ms: int = _MAX_LONG
    #: segment.jitter.ms, at most segment.ms.
    jitter_ms: int = 0

    def new_jitter(self) -> int:
        """Kafka's `LogConfig.randomSegmentJitter`, drawn once per segment."""
        if self.jitter_ms <= 0:
            return 0
        return random.randrange(self.jitter_ms)


UNLIMITED = RollLimits()


@dataclass(slots=True)
class Segment:
    base_offset: int
    created_ms: int
    size: int = 0
    #: Max timestamp of the first batch: the time a segment's age is measured from.
    first_batch_timestamp: int = NO_TIMESTAMP
    #: Largest batch max timestamp so far (Kafka's maxTimestampSoFar).
    max_timestamp: int = NO_TIMESTAMP
    last_modified_ms: int = 0
    roll_jitter_ms: int = 0

    @property
    def largest_timestamp(self) -> int:
        """What retention and min.compaction.lag.ms compare with now: the largest record
        timestamp, or the segment's modification time when it has none."""
        return self.max_timestamp if self.max_timestamp >= 0 else self.last_modified_ms

    def should_roll(
        self, limits: RollLimits, batch_size: int, batch_max_timestamp: int, now_ms: int
    ) -> bool:
        """Kafka's `LogSegment.shouldRoll`, for a batch about to be appended."""
        if self.size == 0:
            return False
        if self.size > limits.segment_bytes - batch_size:
            return True
        if self.first_batch_timestamp >= 0:
            waited = batch_max_timestamp - self.first_batch_timestamp
        else:
            waited = now_ms - self.created_ms
        return waited > limits.segment_ms - self.roll_jitter_ms

    def add(self, size: int, max_timestamp: int, now_ms: int) -> None:
        if self.size == 0:
            self.first_batch_timestamp = max_timestamp
        self.size += size
        if max_timestamp > self.max_timestamp:
            self.max_timestamp = max_timestamp
        self.last_modified_ms = now_ms
