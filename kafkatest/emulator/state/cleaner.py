"""The log cleaner: Kafka's compaction, one pass over the closed segments of one log.

What is cleanable and when follows `LogCleanerManager` (first dirty offset from the
last pass, never the active segment nor anything at or after the last stable
offset, min.compaction.lag.ms holding recent segments back, min.cleanable.dirty.ratio
or max.compaction.lag.ms deciding when); a pass follows `Cleaner.doClean`: map each
key of the dirty part to its latest offset, then recopy every segment below the
first uncleanable offset, grouped up to the segment size, keeping a record only if
nothing later in the dirty part has its key. Offsets never move, so readers see
gaps. Tombstones survive the pass that first sees them, which stamps their batch
with a delete horizon (now + delete.retention.ms); a later pass past the horizon
drops them (KIP-534).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass

from kafkatest.emulator.protocol.batches import BatchHeader, read_header
from kafkatest.emulator.protocol.compression import DecompressionError
from kafkatest.emulator.protocol.primitives import DecodeError
from kafkatest.emulator.protocol.record_rewrite import (
    StoredRecord,
    decode_records,
    empty_batch,
    has_delete_horizon,
    rewrite_batch,
)
from kafkatest.emulator.state.cleaned_transactions import CleanedTransactions
from kafkatest.emulator.state.errors import CorruptMessage, RecordsRejected
from kafkatest.emulator.state.log import PartitionLog
from kafkatest.emulator.state.segments import Segment

#: Key of the tombstone `compact_now` writes to roll the active segment (a tombstone
#: for a key no one uses deletes nothing a table built from the topic holds).
COMPACT_NOW_KEY = b"kafkatest.compact_now"

_MAX_INT = 2**31 - 1
_MAX_LONG = 2**63 - 1


@dataclass(frozen=True, slots=True)
class CleanerConfig:
    """A topic's compaction settings, with Kafka's defaults."""

    min_cleanable_ratio: float = 0.5
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = _MAX_LONG
    delete_retention_ms: int = 86_400_000
    #: Cleaned segments are merged up to this size (segment.bytes or internal.segment.bytes).
    segment_bytes: int = _MAX_INT


@dataclass(frozen=True, slots=True)
class Cleanable:
    """Kafka's LogToClean: where a pass would start and stop, and how dirty the log is."""

    first_dirty: int
    #: Always a segment's base offset.
    first_uncleanable: int
    clean_bytes: int
    cleanable_bytes: int
    #: max.compaction.lag.ms has passed for the oldest dirty segment.
    overdue: bool

    @property
    def ratio(self) -> float:
        return self.cleanable_bytes / (self.clean_bytes + self.cleanable_bytes)

    def due(self, min_cleanable_ratio: float) -> bool:
        """Whether Kafka's cleaner would pick this log now."""
        return (self.overdue and self.cleanable_bytes > 0) or self.ratio > min_cleanable_ratio


def cleanable(
    log: PartitionLog, config: CleanerConfig, now_ms: int, stable_offset: int
) -> Cleanable | None:
    """The cleanable part of `log` now (Kafka's `cleanableOffsets` and LogToClean),
    or None for an empty log. `stable_offset` is the last stable offset."""
    segments = log.segments
    first_dirty = log.cleaner_checkpoint
    if first_dirty is None or not log.log_start_offset <= first_dirty <= log.log_end_offset:
        first_dirty = log.log_start_offset
    active_base = segments[-1].base_offset
    uncleanable = min(stable_offset, active_base)
    if config.min_compaction_lag_ms > 0:
        horizon = now_ms - config.min_compaction_lag_ms
        for index in _non_active_from(segments, first_dirty):
            if segments[index].largest_timestamp > horizon:
                uncleanable = min(uncleanable, segments[index].base_offset)
                break
    uncleanable = max(first_dirty, uncleanable)
    # calculateCleanableBytes: the bound rounds down to the base of its segment.
    non_active = _non_active_from(segments, uncleanable)
    first_uncleanable = segments[non_active[0]].base_offset if non_active else active_base
    clean_bytes = sum(s.size for s in segments if s.base_offset < first_dirty)
    cleanable_bytes = sum(
        segments[i].size
        for i in _between(segments, min(first_dirty, first_uncleanable), first_uncleanable)
    )
    if clean_bytes + cleanable_bytes == 0:
        return None
    first_timestamps = [
        segments[i].first_batch_timestamp
        for i in _non_active_from(segments, first_dirty)
        if segments[i].first_batch_timestamp > 0
    ]
    overdue = bool(first_timestamps) and min(first_timestamps) < (
        now_ms - max(config.max_compaction_lag_ms, 0)
    )
    return Cleanable(first_dirty, first_uncleanable, clean_bytes, cleanable_bytes, overdue)


def clean(
    log: PartitionLog,
    config: CleanerConfig,
    part: Cleanable,
    now_ms: int,
    producers: Mapping[int, tuple[int | None, int]],
) -> None:
    """One cleaning pass over [log start, part.first_uncleanable).

    `producers` maps each producer the partition remembers to (the offset of its
    last data record, or None after a newer epoch's marker; its epoch): that batch
    or marker stays, maybe emptied, so the producer's sequence and epoch survive.
    """
    segments = log.segments
    end = part.first_uncleanable
    dirty = _between(segments, part.first_dirty, end)
    if not dirty:
        return
    latest: dict[bytes, int] = {}
    txns = CleanedTransactions()
    txns.add_aborted(log.aborted_transactions(part.first_dirty, end))
    for index in dirty:
        for batch in log.segment_batches(index):
            header = read_header(batch)
            if header.is_control:
                txns.on_marker(header, batch)
                continue
            if txns.on_batch(header):
                continue
            if header.base_offset + header.last_offset_delta < part.first_dirty:
                continue
            for record in decode_records(header, batch):
                if record.key is not None and record.offset >= part.first_dirty:
                    latest[record.key] = record.offset
    pass_ = _Pass(latest, end, now_ms, config.delete_retention_ms, producers, CleanedTransactions())
    below = sum(1 for s in segments if s.base_offset < end)
    cleaned: list[tuple[Segment, list[bytes]]] = []
    for group in _groups(segments[:below], config.segment_bytes):
        first, last = segments[group[0]], segments[group[-1]]
        batches: list[bytes] = []
        for index in group:
            upper = segments[index + 1].base_offset if index + 1 < len(segments) else end
            pass_.txns.add_aborted(log.aborted_transactions(segments[index].base_offset, upper))
            for batch in log.segment_batches(index):
                kept = pass_.filter(read_header(batch), batch)
                if kept is not None:
                    batches.append(kept)
        segment = Segment(first.base_offset, first.created_ms, roll_jitter_ms=first.roll_jitter_ms)
        for batch in batches:
            segment.add(len(batch), read_header(batch).max_timestamp, last.last_modified_ms)
        segment.last_modified_ms = last.last_modified_ms
        cleaned.append((segment, batches))
    log.replace_segments(below, cleaned)
    log.keep_aborted_below(end, pass_.txns.still_indexed)
    log.cleaner_checkpoint = end


@dataclass(slots=True)
class _Pass:
    """Kafka's cleaner filter (`Cleaner.cleanInto`) for one pass."""

    latest: dict[bytes, int]
    #: The pass's first uncleanable offset: the map covers offsets below it.
    end: int
    now_ms: int
    delete_retention_ms: int
    producers: Mapping[int, tuple[int | None, int]]
    txns: CleanedTransactions

    def filter(self, header: BatchHeader, batch: bytes) -> bytes | None:
        """The batch as it stays (itself, a filtered copy, an empty header) or None."""
        horizon = header.base_timestamp if has_delete_horizon(header) else None
        if header.is_control:
            may_go = self.txns.on_marker(header, batch)
            discard = may_go and horizon is not None and horizon <= self.now_ms
        else:
            may_go = self.txns.on_batch(header)
            discard = may_go
        records = [] if discard else decode_records(header, batch)
        if header.is_control:
            kept = records
            needs_horizon = horizon is None and may_go and bool(kept)
        else:
            kept = [r for r in records if self._retain(r, horizon)]
            needs_horizon = horizon is None and any(not r.has_value for r in kept)
        if kept:
            if len(kept) == len(records) and not needs_horizon:
                return batch
            if needs_horizon:
                horizon = self.now_ms + self.delete_retention_ms
            return rewrite_batch(header, kept, horizon)
        if (
            self._producer_last(header)
            or header.base_offset + header.last_offset_delta + 1 == self.end
        ):
            return empty_batch(header)
        return None

    def _producer_last(self, header: BatchHeader) -> bool:
        """The batch holding its producer's last sequence (or last epoch's marker)."""
        if header.producer_id < 0:
            return False
        last = self.producers.get(header.producer_id)
        if last is None:
            return False
        last_data, epoch = last
        if last_data is not None:
            return header.base_offset + header.last_offset_delta == last_data
        return header.is_control and header.producer_epoch == epoch

    def _retain(self, record: StoredRecord, horizon: int | None) -> bool:
        if record.offset >= self.end:
            return True
        if record.key is None:
            return False
        if record.offset < self.latest.get(record.key, -1):
            return False
        return record.has_value or horizon is None or self.now_ms < horizon


def _between(segments: list[Segment], start: int, end: int) -> list[int]:
    """Kafka's `logSegments(start, end)`: the segment holding `start`, then every
    segment that begins before `end`."""
    if start >= end:
        return []
    # The last segment starting at or before `start` (the first if none does).
    first = max(bisect_right(segments, start, key=lambda s: s.base_offset) - 1, 0)
    return [i for i in range(first, len(segments)) if segments[i].base_offset < end]


def _non_active_from(segments: list[Segment], offset: int) -> list[int]:
    """Kafka's `nonActiveLogSegmentsFrom`."""
    active_base = segments[-1].base_offset
    if offset > active_base:
        return []
    return _between(segments, offset, active_base)


def _groups(segments: list[Segment], max_size: int) -> list[list[int]]:
    """Consecutive segments merged while their total stays within `max_size`."""
    groups: list[list[int]] = []
    index = 0
    while index < len(segments):
        group = [index]
        size = segments[index].size
        index += 1
        while index < len(segments) and size + segments[index].size <= max_size:
            group.append(index)
            size += segments[index].size
            index += 1
        groups.append(group)
    return groups


def refuse_keyless(
    topic: str, partition: int, header: BatchHeader, batch: bytes, log_start_offset: int
) -> None:
    """Kafka's `LogValidator.validateKey` on produce: the cleaner could not keep a
    keyless record, so a compacted topic refuses it."""
    try:
        records = decode_records(header, batch)
    except (DecodeError, DecompressionError) as exc:
        raise CorruptMessage(f"record batch does not decode: {exc}") from exc
    message = (
        f"Compacted topic cannot accept message without key in topic partition {topic}-{partition}"
    )
    errors = [(index, message) for index, record in enumerate(records) if record.key is None]
    if errors:
        raise RecordsRejected(errors, log_start_offset)
