"""The transaction coordinator: transactional ids, their producer epochs and states.

It follows Kafka 4.1's ``TransactionCoordinator`` on one node. The states are
Kafka's (``Empty``, ``Ongoing``, ``CompleteCommit``, ...). Kafka persists a
``Prepare*`` state, answers the client, then writes the markers and the
``Complete*`` state in the background; here the markers are written in the same
step, so a reader never sees a half-written commit (on Kafka it might, for
milliseconds) and the ``Prepare*`` states are never observable.

Two client generations meet here (the transaction version, TV): TV1 clients add
partitions with AddPartitionsToTxn and keep their epoch across transactions; TV2
clients (Kafka 4 Java, KIP-890 part 2) let the partition leader add partitions on
their first Produce v12 and get a bumped epoch from every EndTxn v5. The caller
says which applies, by the request version, as Kafka's broker does. Its states and
metadata are `transaction_model`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kafkatest.emulator.state.errors import (
    ConcurrentTransactions,
    InvalidProducerIdMapping,
    InvalidRequest,
    InvalidTransactionTimeout,
    InvalidTxnState,
    ProducerFenced,
    TransactionAbortable,
    TransactionalIdNotFound,
)
from kafkatest.emulator.state.groups.consumer.regex import compile_linear
from kafkatest.emulator.state.groups.offsets import CommittedOffset
from kafkatest.emulator.state.internal_topics import OFFSETS_TOPIC, partition_for
from kafkatest.emulator.state.transaction_model import (
    COMPLETE_ABORT,
    COMPLETE_COMMIT,
    DEAD,
    EMPTY,
    ONGOING,
    PREPARE_ABORT,
    PREPARE_COMMIT,
    PREPARE_EPOCH_FENCE,
    TopicPartition,
    TransactionHost,
    TransactionMetadata,
)

#: Epoch at which Kafka moves a transactional id to a new producer id.
EXHAUSTED_EPOCH = 32766
#: The coordinator epoch of the single node's transaction log partition.
COORDINATOR_EPOCH = 0
#: kafkatest runs real Kafka with one partition of __consumer_offsets.
OFFSETS_PARTITIONS = 1


class TransactionCoordinator:
    """Owns every transactional id; writes markers through the broker state."""

    def __init__(self, state: TransactionHost) -> None:
        self._state = state
        self._transactions: dict[str, TransactionMetadata] = {}

    # -- lookups ---------------------------------------------------------------------

    def get(self, transactional_id: str) -> TransactionMetadata | None:
        return self._transactions.get(transactional_id)

    def _now(self) -> int:
        return self._state.clock.now_ms()

    # -- InitProducerId --------------------------------------------------------------

    def init_producer(
        self, transactional_id: str, timeout_ms: int, producer_id: int = -1, epoch: int = -1
    ) -> tuple[int, int]:
        """The (producer id, epoch) for a transactional producer starting (again).

        An open transaction of the same id is fenced and aborted first; the caller
        then gets CONCURRENT_TRANSACTIONS and retries, as on Kafka.
        """
        if transactional_id == "":
            raise InvalidRequest("a transactional id must not be empty")
        max_timeout_ms = self._state.settings.transaction_max_timeout_ms
        if timeout_ms <= 0 or timeout_ms > max_timeout_ms:
            raise InvalidTransactionTimeout(
                f"transaction.timeout.ms={timeout_ms} is outside (0, {max_timeout_ms}] "
                "(the broker's transaction.max.timeout.ms)"
            )
        expected = producer_id >= 0
        meta = self._transactions.get(transactional_id)
        if meta is None:
            new_id = self._state.producers.new_producer_id()
            meta = TransactionMetadata(transactional_id, new_id, 0, timeout_ms)
            meta.last_update_ms = self._now()
            self._transactions[transactional_id] = meta
            self._state.producers.set_epoch(new_id, 0)
            return new_id, 0
        if expected and producer_id != meta.producer_id:
            raise ProducerFenced(
                f"producer {producer_id} is not the current producer {meta.producer_id} "
                f"of transactional id {transactional_id!r}"
            )
        if meta.state == ONGOING:
            self._fence_and_abort(meta)
            raise ConcurrentTransactions(
                f"transactional id {transactional_id!r} had an open transaction; it was aborted"
            )
        if meta.epoch >= EXHAUSTED_EPOCH and (not expected or epoch == meta.epoch):
            meta.producer_id = self._state.producers.new_producer_id()
            meta.last_epoch, meta.epoch = -1, 0
        elif not expected or epoch == meta.epoch:
            meta.last_epoch, meta.epoch = (meta.epoch if expected else -1), meta.epoch + 1
        elif epoch != meta.last_epoch:
            raise ProducerFenced(
                f"epoch {epoch} of producer {producer_id} is stale (current {meta.epoch})"
            )
        meta.timeout_ms = timeout_ms
        meta.state = EMPTY
        meta.last_update_ms = self._now()
        self._state.producers.set_epoch(meta.producer_id, meta.epoch)
        return meta.producer_id, meta.epoch

    # -- adding partitions -----------------------------------------------------------

    def _mapped(self, transactional_id: str, producer_id: int) -> TransactionMetadata:
        """The id's transaction, if `producer_id` is its producer."""
        _require_id(transactional_id)
        meta = self._transactions.get(transactional_id)
        if meta is None or meta.producer_id != producer_id:
            raise InvalidProducerIdMapping(
                f"producer {producer_id} is not the producer of transactional id "
                f"{transactional_id!r}"
            )
        return meta

    def _checked(self, transactional_id: str, producer_id: int, epoch: int) -> TransactionMetadata:
        meta = self._mapped(transactional_id, producer_id)
        if epoch != meta.epoch:
            raise ProducerFenced(
                f"producer {producer_id} epoch {epoch} is fenced (current epoch {meta.epoch})"
            )
        return meta

    def add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        epoch: int,
        partitions: Iterable[TopicPartition],
    ) -> None:
        """Put partitions into the producer's transaction, opening it if needed."""
        meta = self._checked(transactional_id, producer_id, epoch)
        if meta.state in (PREPARE_COMMIT, PREPARE_ABORT, PREPARE_EPOCH_FENCE):
            raise ConcurrentTransactions(f"transaction {transactional_id!r} is ending")
        wanted = set(partitions)
        if meta.state == ONGOING and wanted <= meta.partitions:
            return
        if meta.state != ONGOING:
            meta.state = ONGOING
            meta.start_ms = self._now()
        meta.partitions |= wanted
        meta.last_update_ms = self._now()

    def verify(
        self, transactional_id: str, producer_id: int, epoch: int, partition: TopicPartition
    ) -> None:
        """KIP-890 part 1: is `partition` already in the producer's open transaction?"""
        meta = self._checked(transactional_id, producer_id, epoch)
        if meta.state != ONGOING or partition not in meta.partitions:
            raise TransactionAbortable(
                f"{partition[0]}-{partition[1]} was not added to the transaction of "
                f"{transactional_id!r} (AddPartitionsToTxn must come first)"
            )

    def add_offsets(self, transactional_id: str, producer_id: int, epoch: int, group: str) -> None:
        """AddOffsetsToTxn: the group's offsets partition joins the transaction."""
        self.add_partitions(transactional_id, producer_id, epoch, [offsets_partition(group)])

    def commit_offsets(
        self,
        transactional_id: str,
        producer_id: int,
        epoch: int,
        group: str,
        offsets: Mapping[TopicPartition, CommittedOffset],
        add_partition: bool,
    ) -> None:
        """TxnOffsetCommit: offsets stay pending until the transaction commits.

        `add_partition` is TV2 (v5): the group's offsets partition joins the
        transaction implicitly; otherwise AddOffsetsToTxn must have added it.
        """
        partition = offsets_partition(group)
        if add_partition:
            self.add_partitions(transactional_id, producer_id, epoch, [partition])
        else:
            try:
                self.verify(transactional_id, producer_id, epoch, partition)
            except TransactionAbortable as exc:
                raise InvalidTxnState(str(exc)) from exc
        meta = self._transactions[transactional_id]
        meta.pending_offsets.setdefault(group, {}).update(offsets)

    def pending_offsets(self, group: str) -> set[TopicPartition]:
        """Partitions of `group` with transactional offsets not yet committed."""
        return {
            tp for meta in self._transactions.values() for tp in meta.pending_offsets.get(group, ())
        }

    # -- ending ----------------------------------------------------------------------

    def end_transaction(
        self, transactional_id: str, producer_id: int, epoch: int, commit: bool, tv2: bool
    ) -> tuple[int, int]:
        """EndTxn; the (producer id, epoch) the client continues with."""
        meta = self._mapped(transactional_id, producer_id)
        what = "commit" if commit else "abort"
        completed = COMPLETE_COMMIT if commit else COMPLETE_ABORT
        retry = tv2 and epoch == meta.last_epoch and epoch != meta.epoch
        if epoch != meta.epoch and not retry:
            raise ProducerFenced(
                f"producer {producer_id} epoch {epoch} is fenced (current epoch {meta.epoch})"
            )
        terminal = (COMPLETE_COMMIT, COMPLETE_ABORT)
        if retry:
            # TV2: the previous epoch retries the EndTxn that ended the transaction.
            if meta.state not in terminal:
                raise ProducerFenced(f"producer {producer_id} epoch {epoch} is fenced")
            if meta.state != completed:
                raise InvalidTxnState(
                    f"cannot {what} the transaction of {transactional_id!r}: it was "
                    f"{'committed' if meta.state == COMPLETE_COMMIT else 'aborted'}"
                )
        elif meta.state == ONGOING:
            self._complete(meta, commit, bump=tv2)
        elif tv2 and not commit and meta.state in (EMPTY, *terminal):
            self._complete(meta, commit=False, bump=True)  # TV2 allows an empty abort
        elif tv2 or meta.state != completed:
            raise InvalidTxnState(
                f"cannot {what} the transaction of {transactional_id!r} in state {meta.state}"
            )
        # else: TV1, a retry of the request that ended it
        return meta.producer_id, meta.epoch

    def _complete(self, meta: TransactionMetadata, commit: bool, bump: bool) -> None:
        if bump:
            meta.last_epoch, meta.epoch = meta.epoch, meta.epoch + 1
            self._state.producers.set_epoch(meta.producer_id, meta.epoch)
        now = self._now()
        for topic, partition in sorted(meta.partitions):
            if topic == OFFSETS_TOPIC:
                continue
            self._state.write_marker(
                topic, partition, meta.producer_id, meta.epoch, commit, COORDINATOR_EPOCH
            )
        if commit:
            for group, offsets in meta.pending_offsets.items():
                for (topic, partition), committed in offsets.items():
                    if committed.commit_timestamp_ms < 0:
                        committed = CommittedOffset(
                            committed.offset, committed.leader_epoch, committed.metadata, now
                        )
                    self._state.offsets.commit(group, topic, partition, committed)
        meta.pending_offsets.clear()
        meta.partitions.clear()
        meta.state = COMPLETE_COMMIT if commit else COMPLETE_ABORT
        meta.last_update_ms = now

    def _fence_and_abort(self, meta: TransactionMetadata) -> None:
        """Kafka's epoch fence: bump the epoch (the zombie is now stale), then abort.
        The old epoch stays known as the last one, so a TV2 EndTxn from it is read as
        a retry (an abort answered as done, a commit refused as INVALID_TXN_STATE)."""
        self._complete(meta, commit=False, bump=True)

    def shift(self, ms: int) -> None:
        """Move every transaction's start and last update by `ms` (the clock was put
        back by as much): an open one times out as far ahead as it did."""
        for meta in self._transactions.values():
            if meta.start_ms >= 0:
                meta.start_ms += ms
            if meta.last_update_ms >= 0:
                meta.last_update_ms += ms

    def abort_timed_out(self) -> list[str]:
        """Abort every transaction open longer than its timeout; their ids.

        Kafka's check runs every ``transaction.abort.timed.out.transaction.cleanup.interval.ms``;
        the broker state calls this on its clock at that interval.
        """
        if not self._transactions:
            return []
        now = self._now()
        expired = [
            m
            for m in self._transactions.values()
            if m.state == ONGOING and m.start_ms + m.timeout_ms < now
        ]
        for meta in expired:
            self._fence_and_abort(meta)
        return [m.transactional_id for m in expired]

    def forget_topic(self, topic: str) -> None:
        """A deleted topic leaves the transactions that held it."""
        for meta in self._transactions.values():
            meta.partitions = {tp for tp in meta.partitions if tp[0] != topic}

    # -- listing -----------------------------------------------------------------------

    def list(
        self,
        states: Iterable[str] = (),
        producer_ids: Iterable[int] = (),
        min_duration_ms: int = -1,
        pattern: str | None = None,
    ) -> list[TransactionMetadata]:
        """ListTransactions' filters (an empty filter matches everything). The duration
        counts from the last transaction's start whatever the state, as Kafka's does."""
        wanted_states = set(states)
        wanted_ids = set(producer_ids)
        regex = compile_linear(pattern) if pattern else None  # a client's pattern: RE2
        now = self._now()
        return [
            m
            for m in self._transactions.values()
            if (not wanted_states or m.state in wanted_states)
            and (not wanted_ids or m.producer_id in wanted_ids)
            and (min_duration_ms < 0 or now - m.start_ms > min_duration_ms)
            and (regex is None or regex.fullmatch(m.transactional_id) is not None)
        ]

    def describe(self, transactional_id: str) -> TransactionMetadata:
        if transactional_id == "":
            raise InvalidRequest("a transactional id must not be empty")
        meta = self._transactions.get(transactional_id)
        if meta is None or meta.state == DEAD:
            raise TransactionalIdNotFound(
                f"transactional id {transactional_id!r} is not known to the coordinator"
            )
        return meta


def offsets_partition(group: str) -> TopicPartition:
    """The __consumer_offsets partition holding `group`'s offsets."""
    return OFFSETS_TOPIC, partition_for(group, OFFSETS_PARTITIONS)


def _require_id(transactional_id: str) -> None:
    """Kafka's coordinator refuses an empty transactional id before looking it up."""
    if not transactional_id:
        raise InvalidRequest("the transactional id is empty")
