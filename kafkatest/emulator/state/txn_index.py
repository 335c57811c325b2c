"""One partition's view of transactions: which are open, which were aborted where.

Kafka's partition leader keeps, per producer, the first offset of its open
transaction (the last stable offset is the smallest of them) and, per segment, a
transaction index of aborted transactions (producer id, first offset, offset of
the abort marker) that read_committed fetches hand to consumers so they can drop
the aborted records. A log gets this index only once a transactional batch
reaches it, so logs that never see a transaction pay nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    producer_id: int
    #: Offset of the transaction's first batch on this partition.
    first_offset: int
    #: Offset of its abort marker.
    last_offset: int


@dataclass(slots=True)
class TxnIndex:
    #: producer id -> first offset of its open transaction on this partition.
    open: dict[int, int] = field(default_factory=dict)
    #: Aborted transactions in marker order (so by last offset).
    aborted: list[AbortedTxn] = field(default_factory=list)

    def first_open_offset(self) -> int | None:
        return min(self.open.values()) if self.open else None

    def begin(self, producer_id: int, offset: int) -> None:
        """A transactional batch landed at `offset`: it opens the producer's
        transaction here unless one is already open."""
        self.open.setdefault(producer_id, offset)

    def end(self, producer_id: int, marker_offset: int, commit: bool) -> AbortedTxn | None:
        """A marker at `marker_offset` ends the producer's transaction; an abort of a
        transaction that wrote here is remembered for read_committed readers."""
        first = self.open.pop(producer_id, None)
        if first is None or commit:
            return None
        aborted = AbortedTxn(producer_id, first, marker_offset)
        self.aborted.append(aborted)
        return aborted

    def aborted_overlapping(self, start: int, end: int) -> list[AbortedTxn]:
        """Aborted transactions a read of [start, end) must be told about (Kafka's
        ``TransactionIndex.collectAbortedTxns``: marker at or after `start`, first
        offset before `end`)."""
        return [a for a in self.aborted if a.last_offset >= start and a.first_offset < end]

    def forget_before(self, offset: int) -> None:
        """Deleted records take the index entries that lie wholly below them (an
        open transaction stays open: the last stable offset is then the log start)."""
        self.aborted = [a for a in self.aborted if a.last_offset >= offset]
