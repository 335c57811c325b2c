"""One partition's log: stored batches, offsets, timestamp lookups, retention.

Batches are kept whole, exactly as placed (see `protocol.batches.place`), with
per-batch base offset, last offset and max timestamp beside them: reads locate
batches by bisecting offsets, and only by-timestamp lookups decode records.
Retention deletes whole batches from the front, as Kafka deletes whole segments.
The log also keeps its leader-epoch history, as Kafka's log does, so that deleting
records moves the first epoch's start with the log start, and (once a transaction
touches it) its transaction index, from which the last stable offset follows.
"""

from __future__ import annotations

from bisect import bisect_left

from kafkatest.emulator.protocol.batches import BatchHeader, read_header
from kafkatest.emulator.protocol.record_timestamps import record_timestamps
from kafkatest.emulator.state.errors import OffsetOutOfRange
from kafkatest.emulator.state.leader_epochs import LeaderEpochCache
from kafkatest.emulator.state.txn_index import AbortedTxn, TxnIndex


class PartitionLog:
    def __init__(self) -> None:
        self._batches: list[bytes] = []
        self._last_offsets: list[int] = []
        self._max_timestamps: list[int] = []
        #: Running maximum of max timestamps: non-decreasing, so it can be bisected.
        self._max_timestamp_prefix: list[int] = []
        self.log_start_offset = 0
        self.log_end_offset = 0
        self.size_bytes = 0
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

    def append(self, batch: bytes, record_count: int, max_timestamp: int) -> int:
        """Store an already placed batch; returns its base offset."""
        base = self.log_end_offset
        self._batches.append(batch)
        self._last_offsets.append(base + record_count - 1)
        self._max_timestamps.append(max_timestamp)
        prefix = self._max_timestamp_prefix
        prefix.append(max(max_timestamp, prefix[-1]) if prefix else max_timestamp)
        self.log_end_offset = base + record_count
        self.size_bytes += len(batch)
        return base

    def append_transactional(
        self, batch: bytes, record_count: int, max_timestamp: int, producer_id: int
    ) -> int:
        """Store a transactional data batch; it opens the producer's transaction here."""
        base = self.append(batch, record_count, max_timestamp)
        if self.txns is None:
            self.txns = TxnIndex()
        self.txns.begin(producer_id, base)
        return base

    def append_marker(
        self, batch: bytes, max_timestamp: int, producer_id: int, commit: bool
    ) -> AbortedTxn | None:
        """Store a commit or abort marker (one offset) ending the producer's transaction."""
        offset = self.append(batch, 1, max_timestamp)
        if self.txns is None:
            return None
        return self.txns.end(producer_id, offset, commit)

    def aborted_transactions(self, start: int, end: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping the offsets [start, end)."""
        if self.txns is None:
            return []
        return self.txns.aborted_overlapping(start, end)

    def check_offset(self, offset: int) -> None:
        if offset < self.log_start_offset or offset > self.log_end_offset:
            raise OffsetOutOfRange(
                f"offset {offset} is outside [{self.log_start_offset}, {self.log_end_offset}]"
            )

    def read(
        self, offset: int, max_bytes: int, at_least_one: bool, below: int | None = None
    ) -> list[bytes]:
        """Whole batches from the one holding `offset`, up to `max_bytes`.

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

    # -- timestamps --------------------------------------------------------------

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record at or after `timestamp`."""
        index = bisect_left(self._max_timestamp_prefix, timestamp)
        while index < len(self._batches):
            if self._max_timestamps[index] >= timestamp:
                for offset, record_ts in self._records_of(index):
                    if record_ts >= timestamp and offset >= self.log_start_offset:
                        return offset, record_ts
            index += 1
        return None

    def max_timestamp(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the earliest record holding the largest timestamp."""
        if not self._batches:
            return None
        best = max(self._max_timestamps)
        index = self._max_timestamps.index(best)
        for offset, record_ts in self._records_of(index):
            if record_ts == best:
                return offset, record_ts
        return self._last_offsets[index], best

    def _records_of(self, index: int) -> list[tuple[int, int]]:
        batch = self._batches[index]
        return list(record_timestamps(read_header(batch), batch))

    def header_at(self, index: int) -> BatchHeader:
        return read_header(self._batches[index])

    # -- deletion ------------------------------------------------------------------

    def delete_before(self, offset: int) -> None:
        """Advance the log start to `offset` (DeleteRecords), dropping whole batches below it."""
        if offset > self.log_end_offset:
            raise OffsetOutOfRange(
                f"cannot delete up to {offset}: the log ends at {self.log_end_offset}"
            )
        if offset <= self.log_start_offset:
            return
        self.log_start_offset = offset
        self._drop_batches(bisect_left(self._last_offsets, offset))
        self.epochs.truncate_from_start(offset)
        if self.txns is not None:
            self.txns.forget_before(offset)

    def apply_retention(self, now_ms: int, retention_ms: int, retention_bytes: int) -> None:
        """Delete the oldest batches that break time or size retention (-1 = unlimited)."""
        drop = 0
        if retention_ms >= 0:
            cutoff = now_ms - retention_ms
            while drop < len(self._batches) and self._max_timestamps[drop] < cutoff:
                drop += 1
        if retention_bytes >= 0:
            size = self.size_bytes - sum(len(b) for b in self._batches[:drop])
            while drop < len(self._batches) and size - len(self._batches[drop]) >= retention_bytes:
                size -= len(self._batches[drop])
                drop += 1
        if drop:
            new_start = self._last_offsets[drop - 1] + 1
            self._drop_batches(drop)
            self.log_start_offset = max(self.log_start_offset, new_start)
            self.epochs.truncate_from_start(self.log_start_offset)
            if self.txns is not None:
                self.txns.forget_before(self.log_start_offset)

    def _drop_batches(self, count: int) -> None:
        if count <= 0:
            return
        self.size_bytes -= sum(len(b) for b in self._batches[:count])
        del self._batches[:count]
        del self._last_offsets[:count]
        del self._max_timestamps[:count]
        del self._max_timestamp_prefix[:count]
