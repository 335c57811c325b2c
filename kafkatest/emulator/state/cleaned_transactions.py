"""What the log cleaner tracks of transactions while it walks a log (Kafka's
`CleanedTransactionMetadata`).

Walking batches in offset order, it learns which transactions were aborted (from
the log's aborted-transaction index) and so which data batches to drop outright,
and whether a marker can go: an ABORT marker once no batch of its transaction is
left, a COMMIT marker once the walk met no batch of its transaction. Such a marker
still waits for its delete horizon, as a tombstone does.
"""

from __future__ import annotations

import heapq
import itertools
import struct
from collections.abc import Iterable
from dataclasses import dataclass

from kafkatest.emulator.protocol.batches import BatchHeader
from kafkatest.emulator.protocol.control_batches import ABORT, COMMIT
from kafkatest.emulator.protocol.record_rewrite import decode_records
from kafkatest.emulator.state.txn_index import AbortedTxn

_CONTROL_KEY = struct.Struct(">hh")


@dataclass(slots=True)
class _Aborted:
    txn: AbortedTxn
    #: A batch of the transaction was met on this walk.
    seen: bool = False


class CleanedTransactions:
    def __init__(self) -> None:
        self._pending: list[tuple[int, int, AbortedTxn]] = []
        self._order = itertools.count()
        #: producer id -> its aborted transaction the walk is inside of.
        self._aborted: dict[int, _Aborted] = {}
        self._committed: set[int] = set()
        #: Aborted transactions whose marker stays because their data is still there.
        self.still_indexed: list[AbortedTxn] = []

    def add_aborted(self, aborted: Iterable[AbortedTxn]) -> None:
        for txn in aborted:
            heapq.heappush(self._pending, (txn.first_offset, next(self._order), txn))

    def _reach(self, offset: int) -> None:
        pending = self._pending
        while pending and pending[0][0] <= offset:
            txn = heapq.heappop(pending)[2]
            self._aborted.setdefault(txn.producer_id, _Aborted(txn))

    def on_batch(self, header: BatchHeader) -> bool:
        """A data batch: whether it belongs to an aborted transaction (and goes)."""
        self._reach(header.base_offset + header.last_offset_delta)
        if not header.is_transactional:
            return False
        entry = self._aborted.get(header.producer_id)
        if entry is not None:
            entry.seen = True
            return True
        self._committed.add(header.producer_id)
        return False

    def on_marker(self, header: BatchHeader, batch: bytes) -> bool:
        """A control batch: whether the marker may go (once its delete horizon passed)."""
        self._reach(header.base_offset + header.last_offset_delta)
        records = decode_records(header, batch) if header.record_count else []
        if not records or records[0].key is None or len(records[0].key) < _CONTROL_KEY.size:
            return True  # emptied by an earlier pass
        _version, kind = _CONTROL_KEY.unpack_from(records[0].key)
        if kind == ABORT:
            entry = self._aborted.pop(header.producer_id, None)
            if entry is not None and entry.seen:
                self.still_indexed.append(entry.txn)
                return False
            return True
        if kind == COMMIT:
            if header.producer_id in self._committed:
                self._committed.discard(header.producer_id)
                return False
            return True
        return False
