"""One partition's log: stored batches, segments, offsets, timestamp lookups, retention.

Batches are kept whole, exactly as placed (see `protocol.batches.place`), with
per-batch last offset and max timestamp beside them: reads locate batches by
bisecting offsets, and only by-timestamp lookups decode records. Segments
(`state.segments`) cut the batches into runs as Kafka's log does: a new one is
rolled on append by Kafka's rule, retention deletes whole segments from the
front, and the cleaner (`state.cleaner`) rewrites closed ones.
The log also keeps its leader-epoch history, as Kafka's log does, so that deleting
records moves the first epoch's start with the log start, and (once a transaction
touches it) its transaction index, from which the last stable offset follows.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence

from kafkatest.emulator.protocol.batches import read_header
from kafkatest.emulator.protocol.record_timestamps import record_timestamps
from kafkatest.emulator.state.errors import OffsetOutOfRange
from kafkatest.emulator.state.leader_epochs import LeaderEpochCache
from kafkatest.emulator.state.segments import UNLIMITED, RollLimits, Segment
from kafkatest.emulator.state.time_index import TimeIndex
from kafkatest.emulator.state.txn_index import AbortedTxn, TxnIndex
from kafkatest.limits import MAX_OFFSET


class PartitionLog:
    def __init__(self) -> None:
        self._batches: list[bytes] = []
        self._last_offsets: list[int] = []
        #: Each batch's max timestamp, indexed for lookups by timestamp.
        self._times = TimeIndex()
        #: Oldest first; the last one is the active segment. Never empty.
        self.segments: list[Segment] = [Segment(0, created_ms=-1)]
        self.log_start_offset = 0
        self.log_end_offset = 0
        self.size_bytes = 0
        #: Where the cleaner's next pass starts (Kafka's cleaner-offset-checkpoint);
        #: None until the first pass.
        self.cleaner_checkpoint: int | None = None
        self.epochs = LeaderEpochCache()
        #: Open and aborted transactions; None until a transactional batch arrives.
        self.txns: TxnIndex | None = None

    @property
    def high_watermark(self) -> int:
        """One replica, so everything appended is committed."""
        return self.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        """Where read_committed readers stop: the first offset of the earliest open
        transaction, else the high watermark (never below the log start)."""
        txns = self.txns
        first_open = None if txns is None else txns.first_open_offset()
        if first_open is None:
            return self.high_watermark
        return max(min(first_open, self.high_watermark), self.log_start_offset)

    @property
    def batch_count(self) -> int:
        return len(self._batches)

    def append(
        self,
        batch: bytes,
        record_count: int,
        max_timestamp: int,
        now_ms: int = 0,
        limits: RollLimits = UNLIMITED,
    ) -> int:
        """Store an already placed batch, rolling a new segment first if Kafka would;
        returns its base offset."""
        base = self.log_end_offset
        size = len(batch)
        active = self.segments[-1]
        if active.should_roll(limits, size, max_timestamp, now_ms):
            active = self.roll(now_ms, limits)
        elif active.created_ms < 0:
            active.created_ms = now_ms
        active.add(size, max_timestamp, now_ms)
        self._batches.append(batch)
        self._last_offsets.append(base + record_count - 1)
        self._times.append(max_timestamp)
        self.log_end_offset = base + record_count
        self.size_bytes += size
        return base

    def append_transactional(
        self,
        batch: bytes,
        record_count: int,
        max_timestamp: int,
        producer_id: int,
        now_ms: int = 0,
        limits: RollLimits = UNLIMITED,
    ) -> int:
        """Store a transactional data batch; it opens the producer's transaction here."""
        base = self.append(batch, record_count, max_timestamp, now_ms, limits)
        if self.txns is None:
            self.txns = TxnIndex()
        self.txns.begin(producer_id, base)
        return base

    def append_marker(
        self,
        batch: bytes,
        max_timestamp: int,
        producer_id: int,
        commit: bool,
        now_ms: int = 0,
        limits: RollLimits = UNLIMITED,
    ) -> AbortedTxn | None:
        """Store a commit or abort marker (one offset) ending the producer's transaction."""
        offset = self.append(batch, 1, max_timestamp, now_ms, limits)
        if self.txns is None:
            return None
        return self.txns.end(producer_id, offset, commit)

    def aborted_transactions(self, start: int, end: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping the offsets [start, end)."""
        if self.txns is None:
            return []
        return self.txns.aborted_overlapping(start, end)

    def roll(self, now_ms: int, limits: RollLimits = UNLIMITED) -> Segment:
        """Close the active segment and start a new one at the log end (an empty
        active segment is kept instead, as Kafka replaces it by an identical one)."""
        active = self.segments[-1]
        if active.size == 0:
            return active
        segment = Segment(
            self.log_end_offset,
            created_ms=now_ms,
            last_modified_ms=now_ms,
            roll_jitter_ms=limits.new_jitter(),
        )
        self.segments.append(segment)
        return segment

    def check_offset(self, offset: int) -> None:
        if offset < self.log_start_offset or offset > self.log_end_offset:
            raise OffsetOutOfRange(
                f"offset {offset} is outside [{self.log_start_offset}, {self.log_end_offset}]"
            )

    def read(
        self, offset: int, max_bytes: int, at_least_one: bool, below: int | None = None
    ) -> list[bytes]:
        """Whole batches from the one holding `offset` (or the next after a gap the
        cleaner left), up to `max_bytes`.

        With `at_least_one`, the first batch is returned even if larger, so that
        a consumer can always progress (Kafka's KIP-74 rule). With `below` (the
        last stable offset for read_committed), no batch reaching it is returned.
        """
        return self.read_bounded(offset, max_bytes, at_least_one, below)[0]

    def read_bounded(
        self, offset: int, max_bytes: int, at_least_one: bool, below: int | None = None
    ) -> tuple[list[bytes], int]:
        """`read`, plus the offset the byte limit stopped at (the next batch's base
        offset, else the log end): Kafka's upper bound for aborted transactions."""
        self.check_offset(offset)
        index = bisect_left(self._last_offsets, offset)
        out: list[bytes] = []
        used = 0
        batches = self._batches
        last_offsets = self._last_offsets
        stop = self.log_end_offset
        while index < len(batches):
            batch = batches[index]
            if used + len(batch) > max_bytes and not (at_least_one and not out):
                stop = last_offsets[index - 1] + 1 if index else self.log_start_offset
                break
            if below is not None and last_offsets[index] >= below:
                break
            out.append(batch)
            used += len(batch)
            index += 1
        return out, stop

    # -- segments --------------------------------------------------------------------

    def segment_batches(self, index: int) -> list[bytes]:
        """The stored batches of segment `index`."""
        start, end = self._batch_range(index)
        return self._batches[start:end]

    def _batch_range(self, index: int) -> tuple[int, int]:
        segments = self.segments
        start = bisect_left(self._last_offsets, segments[index].base_offset)
        if index + 1 == len(segments):
            return start, len(self._batches)
        return start, bisect_left(self._last_offsets, segments[index + 1].base_offset)

    def replace_segments(self, count: int, cleaned: Sequence[tuple[Segment, list[bytes]]]) -> None:
        """Swap the first `count` segments for `cleaned` ones (the cleaner's output).

        Batches keep their offsets, so the flat per-batch lists are rebuilt from the
        batch headers; the log start and end do not move.
        """
        _, end = self._batch_range(count - 1)
        batches = [batch for _, group in cleaned for batch in group] + self._batches[end:]
        headers = [read_header(batch) for batch in batches]
        self._batches = batches
        self._last_offsets = [h.base_offset + h.last_offset_delta for h in headers]
        self._times.replace(h.max_timestamp for h in headers)
        self.segments[:count] = [segment for segment, _ in cleaned]
        self.size_bytes = sum(segment.size for segment in self.segments)

    def keep_aborted_below(self, end: int, kept: list[AbortedTxn]) -> None:
        """After a cleaner pass over [log start, end): below `end`, the aborted
        transactions left in the index are `kept` (those whose data is still there)."""
        if self.txns is not None:
            self.txns.aborted = [a for a in self.txns.aborted if a.last_offset >= end] + kept
            self.txns.aborted.sort(key=lambda a: a.last_offset)

    # -- timestamps --------------------------------------------------------------

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record at or after `timestamp`, at or
        above the log start: batches are found through the time index (`TimeIndex`),
        and only those that hold such a timestamp are decoded."""
        start = self.log_start_offset
        index = self._times.first_at_or_after(timestamp, bisect_left(self._last_offsets, start))
        while index is not None:
            for offset, record_ts in self._records_of(index):
                if record_ts >= timestamp and offset >= start:
                    return offset, record_ts
            index = self._times.first_at_or_after(timestamp, index + 1)
        return None

    def max_timestamp(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the earliest record holding the largest timestamp."""
        found = self._times.largest()
        if found is None:
            return None
        index, best = found
        first = (entry for entry in self._records_of(index) if entry[1] == best)
        return next(first, (self._last_offsets[index], best))

    def _records_of(self, index: int) -> list[tuple[int, int]]:
        batch = self._batches[index]
        return list(record_timestamps(read_header(batch), batch))

    def start_at(self, offset: int) -> None:
        """Make an empty log begin at `offset`, as a log whose earlier records were all
        deleted does: a replayed capture then keeps its records' original offsets."""
        if self._batches or self.log_end_offset != self.log_start_offset:
            raise OffsetOutOfRange(
                f"cannot start the log at {offset}: it already holds offsets "
                f"{self.log_start_offset}-{self.log_end_offset - 1}"
            )
        if not 0 <= offset <= MAX_OFFSET:
            raise OffsetOutOfRange(f"cannot start a log at offset {offset} (0 to {MAX_OFFSET})")
        self.log_start_offset = self.log_end_offset = offset
        self.segments = [Segment(offset, created_ms=-1)]

    # -- deletion ------------------------------------------------------------------

    def delete_before(self, offset: int) -> None:
        """Advance the log start to `offset` (DeleteRecords).

        Segments wholly below the new start go at once (Kafka's next retention check
        deletes them); the segment holding `offset` keeps its earlier batches, which
        reads below the log start never reach.
        """
        if offset > self.log_end_offset:
            raise OffsetOutOfRange(
                f"cannot delete up to {offset}: the log ends at {self.log_end_offset}"
            )
        if offset <= self.log_start_offset:
            return
        self.log_start_offset = offset
        self.epochs.truncate_from_start(offset)
        if self.txns is not None:
            self.txns.forget_before(offset)
        self._delete_segments_below_start()

    def _delete_segments_below_start(self) -> None:
        segments = self.segments
        count = 0
        while (
            count + 1 < len(segments) and segments[count + 1].base_offset <= self.log_start_offset
        ):
            count += 1
        self._delete_segments(count)

    def apply_retention(self, now_ms: int, retention_ms: int, retention_bytes: int) -> None:
        """Delete the oldest whole segments that break size, then time retention
        (-1 = unlimited), as Kafka's `UnifiedLog.deleteOldSegments` does."""
        if retention_bytes >= 0 and self.size_bytes >= retention_bytes:
            excess = self.size_bytes - retention_bytes

            def over_size(segment: Segment) -> bool:
                nonlocal excess
                if excess - segment.size < 0:
                    return False
                excess -= segment.size
                return True

            self._delete_while(over_size, now_ms)
        if retention_ms >= 0:
            self._delete_while(lambda s: now_ms - s.largest_timestamp > retention_ms, now_ms)

    def _delete_while(self, deletable: Callable[[Segment], bool], now_ms: int) -> None:
        """Delete segments from the front while `deletable`; an empty active segment
        stays, and deleting every segment rolls a new empty one first."""
        segments = self.segments
        count = 0
        while count < len(segments):
            segment = segments[count]
            last_and_empty = count == len(segments) - 1 and segment.size == 0
            if not deletable(segment) or last_and_empty:
                break
            count += 1
        if count == len(segments):
            self.roll(now_ms)
        self._delete_segments(count)

    def _delete_segments(self, count: int) -> None:
        if count <= 0:
            return
        start, _ = self._batch_range(count)
        self.size_bytes -= sum(segment.size for segment in self.segments[:count])
        del self.segments[:count]
        del self._batches[:start]
        del self._last_offsets[:start]
        self._times.drop_front(start)
        new_start = self.segments[0].base_offset
        if new_start > self.log_start_offset:
            self.log_start_offset = new_start
            self.epochs.truncate_from_start(new_start)
            if self.txns is not None:
                self.txns.forget_before(new_start)
