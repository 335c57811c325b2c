"""Writing to a partition's log: produced batches, transaction markers, DeleteRecords.

Every write goes through here so that the checks Kafka's leader makes (batch
validity, size, timestamps, keys on compacted topics, the producer's transaction,
idempotent retries) are made on every path, and so that producer state and
waiting fetches hear of each write.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkatest.emulator.protocol.batches import (
    NO_PRODUCER_ID,
    BatchError,
    BatchHeader,
    place,
    validate,
)
from kafkatest.emulator.protocol.control_batches import marker_batch
from kafkatest.emulator.state import cleaner
from kafkatest.emulator.state.clock import Clock
from kafkatest.emulator.state.errors import (
    CorruptMessage,
    InvalidProducerEpoch,
    InvalidRecord,
    InvalidTxnState,
    MessageTooLarge,
    ProducerFenced,
    TransactionAbortable,
)
from kafkatest.emulator.state.notify import AppendSignal
from kafkatest.emulator.state.producers import AppendedBatch, ProducerRegistry
from kafkatest.emulator.state.record_validation import checked_max_timestamp
from kafkatest.emulator.state.topics import Topic, TopicRegistry
from kafkatest.emulator.state.transactions import TransactionCoordinator


@dataclass(frozen=True, slots=True)
class AppendResult:
    base_offset: int
    #: -1 unless the topic uses LogAppendTime.
    log_append_time: int
    log_start_offset: int
    duplicate: bool = False


@dataclass(frozen=True, slots=True)
class TransactionalProduce:
    """What a transactional Produce tells the partition leader about its transaction."""

    transactional_id: str | None
    #: Produce v12+ (TV2): the leader adds the partition to the transaction itself.
    add_partition: bool
    #: Produce v11 understands TRANSACTION_ABORTABLE; older ones get INVALID_TXN_STATE.
    abortable_supported: bool


@dataclass(eq=False)
class PartitionWrites:
    """Every write to a partition's log; `EmulatorState` holds one (``state.writes``)
    and offers its methods as its own (``state.append``)."""

    clock: Clock
    topics: TopicRegistry
    producers: ProducerRegistry
    transactions: TransactionCoordinator
    appends: AppendSignal

    def append(
        self,
        topic: Topic,
        partition: int,
        header: BatchHeader,
        batch: bytes,
        transaction: TransactionalProduce | None = None,
    ) -> AppendResult:
        """Validate and store one produced batch, deduplicating idempotent retries.

        A transactional batch is first checked against its transaction, as Kafka's
        leader does with the coordinator (KIP-890): `transaction` says how.
        """
        log = topic.partition(partition).log
        try:
            validate(header, batch)
        except BatchError as exc:
            raise (CorruptMessage if exc.kind == "corrupt" else InvalidRecord)(str(exc)) from exc
        max_bytes = topic.int_config("max.message.bytes")
        if header.size > max_bytes:
            raise MessageTooLarge(
                f"The batch of {header.size} bytes is larger than max.message.bytes={max_bytes}"
            )
        now = self.clock.now_ms()
        records_max_timestamp = checked_max_timestamp(
            topic, header, batch, now, log.log_start_offset
        )
        if topic.compacted:
            cleaner.refuse_keyless(topic.name, partition, header, batch, log.log_start_offset)
        key = (topic.name, partition)
        if header.is_transactional:
            self._check_transaction(header, key, transaction)
        idempotent = header.producer_id != NO_PRODUCER_ID
        if idempotent:
            earlier = self.producers.check(
                header.producer_id,
                header.producer_epoch,
                key,
                header.base_sequence,
                header.last_sequence,
            )
            if earlier is not None:
                return AppendResult(
                    earlier.base_offset, earlier.log_append_time, log.log_start_offset, True
                )
        log_append_time = -1
        max_timestamp = records_max_timestamp
        create_time_max = None
        if topic.config("message.timestamp.type") == "LogAppendTime":
            log_append_time = max_timestamp = now
        elif header.uses_log_append_time or header.max_timestamp != max_timestamp:
            create_time_max = max_timestamp
        placed = place(
            batch,
            log.log_end_offset,
            topic.partition(partition).leader_epoch,
            log_append_time if log_append_time >= 0 else None,
            create_time_max,
        )
        if header.is_transactional:
            base_offset = log.append_transactional(
                placed,
                header.record_count,
                max_timestamp,
                header.producer_id,
                now,
                topic.roll_limits,
            )
        else:
            base_offset = log.append(
                placed, header.record_count, max_timestamp, now, topic.roll_limits
            )
        if idempotent:
            self.producers.record(
                header.producer_id,
                header.producer_epoch,
                key,
                AppendedBatch(
                    header.base_sequence, header.last_sequence, base_offset, log_append_time
                ),
                max_timestamp,
            )
        self.appends.notify()
        return AppendResult(base_offset, log_append_time, log.log_start_offset)

    def _check_transaction(
        self, header: BatchHeader, key: tuple[str, int], transaction: TransactionalProduce | None
    ) -> None:
        """The leader's question to the coordinator: is this partition in the
        producer's open transaction (v12+: put it there)? Errors as Produce shows them."""
        if transaction is None or transaction.transactional_id is None:
            raise InvalidTxnState(
                "a transactional batch needs the Produce request's transactional id"
            )
        coordinator = self.transactions
        try:
            if transaction.add_partition:
                coordinator.add_partitions(
                    transaction.transactional_id, header.producer_id, header.producer_epoch, [key]
                )
            else:
                coordinator.verify(
                    transaction.transactional_id, header.producer_id, header.producer_epoch, key
                )
        except ProducerFenced as exc:
            # "Producers expect to handle INVALID_PRODUCER_EPOCH in this scenario."
            raise InvalidProducerEpoch(str(exc)) from exc
        except TransactionAbortable as exc:
            if not transaction.abortable_supported:
                raise InvalidTxnState(str(exc)) from exc
            raise

    def write_marker(
        self,
        topic: str,
        partition: int,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        coordinator_epoch: int,
    ) -> None:
        """Append a commit or abort marker, as WriteTxnMarkers does on the leader."""
        found = self.topics.find(topic)
        if found is None or partition >= len(found.partitions):
            return  # deleted while in the transaction: nothing left to mark
        target = found.partition(partition)
        now = self.clock.now_ms()
        batch = marker_batch(
            target.log.log_end_offset,
            target.leader_epoch,
            producer_id,
            producer_epoch,
            commit,
            coordinator_epoch,
            now,
        )
        target.log.append_marker(batch, now, producer_id, commit, now, found.roll_limits)
        self.producers.record_marker(
            producer_id, producer_epoch, (topic, partition), coordinator_epoch, now
        )
        self.appends.notify()

    def delete_records(self, topic: Topic, partition: int, before_offset: int) -> int:
        """DeleteRecords: -1 means the high watermark; returns the new log start."""
        log = topic.partition(partition).log
        log.delete_before(log.high_watermark if before_offset == -1 else before_offset)
        return log.log_start_offset
