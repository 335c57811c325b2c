"""Idempotent producer state: ids, epochs and recent sequences per partition.

Kafka dedupes retried batches by remembering, per producer and partition, the
last five batches' sequence ranges and where they landed. A retry of one of them
is answered with its original offset instead of being appended twice. The same
entries carry what DescribeProducers shows (last timestamp, the coordinator epoch
of the last marker); a partition's open transactions live in its log's
transaction index.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from kafkatest.emulator.state.errors import InvalidProducerEpoch, OutOfOrderSequence

#: How many batches per producer and partition Kafka remembers.
CACHED_BATCHES = 5
_SEQUENCE_SPACE = 0x80000000


@dataclass(frozen=True, slots=True)
class AppendedBatch:
    first_sequence: int
    last_sequence: int
    base_offset: int
    log_append_time: int


@dataclass(slots=True)
class _PartitionProducerState:
    epoch: int
    batches: deque[AppendedBatch] = field(default_factory=lambda: deque(maxlen=CACHED_BATCHES))
    last_timestamp: int = -1
    #: Coordinator epoch of the last transaction marker; -1 before any.
    coordinator_epoch: int = -1


@dataclass(frozen=True, slots=True)
class ActiveProducer:
    """One producer's entry on a partition, as DescribeProducers shows it."""

    producer_id: int
    epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int


PartitionKey = tuple[str, int]


class ProducerRegistry:
    def __init__(self) -> None:
        #: A fresh Kafka cluster hands out producer ids from 0.
        self._next_id = 0
        self._epochs: dict[int, int] = {}
        self._partitions: dict[tuple[int, PartitionKey], _PartitionProducerState] = {}

    def new_producer_id(self) -> int:
        """A producer id never handed out before (idempotent and transactional alike)."""
        producer_id = self._next_id
        self._next_id += 1
        return producer_id

    def set_epoch(self, producer_id: int, epoch: int) -> None:
        """The transaction coordinator moved the producer to `epoch` (a bump or a fence):
        batches from older epochs are refused from now on."""
        if self._epochs.get(producer_id, -1) < epoch:
            self._epochs[producer_id] = epoch

    def init_producer(self, producer_id: int = -1, epoch: int = -1) -> tuple[int, int]:
        """A new id at epoch 0, or the known `producer_id` with its epoch bumped."""
        if producer_id >= 0 and producer_id in self._epochs:
            current = self._epochs[producer_id]
            if epoch != current:
                raise InvalidProducerEpoch(
                    f"producer {producer_id} has epoch {current}, not {epoch}"
                )
            if current < 32766:
                self._epochs[producer_id] = current + 1
                return producer_id, current + 1
        producer_id = self.new_producer_id()
        self._epochs[producer_id] = 0
        return producer_id, 0

    def check(
        self, producer_id: int, epoch: int, partition: PartitionKey, first: int, last: int
    ) -> AppendedBatch | None:
        """The earlier append if this batch is a retry; None if it is new and in order.

        Raises for a fenced epoch or a sequence gap.
        """
        state = self._partitions.get((producer_id, partition))
        known_epoch = self._epochs.get(producer_id)
        if known_epoch is not None and epoch < known_epoch:
            raise InvalidProducerEpoch(
                f"producer {producer_id} epoch {epoch} is older than {known_epoch}"
            )
        if state is None:
            return None
        if epoch < state.epoch:
            raise InvalidProducerEpoch(
                f"producer {producer_id} epoch {epoch} is older than {state.epoch}"
            )
        if epoch > state.epoch:
            if first != 0:
                raise OutOfOrderSequence(
                    f"a new epoch {epoch} must start at sequence 0, not {first}"
                )
            return None
        for batch in state.batches:
            if batch.first_sequence == first and batch.last_sequence == last:
                return batch
        if state.batches:
            expected = (state.batches[-1].last_sequence + 1) % _SEQUENCE_SPACE
            if first != expected:
                raise OutOfOrderSequence(
                    f"expected sequence {expected} from producer {producer_id}, got {first}"
                )
        return None

    def record(
        self,
        producer_id: int,
        epoch: int,
        partition: PartitionKey,
        batch: AppendedBatch,
        timestamp: int = -1,
    ) -> None:
        state = self._entry(producer_id, epoch, partition)
        state.batches.append(batch)
        state.last_timestamp = timestamp
        self.set_epoch(producer_id, epoch)

    def record_marker(
        self,
        producer_id: int,
        epoch: int,
        partition: PartitionKey,
        coordinator_epoch: int,
        timestamp: int,
    ) -> None:
        """A transaction marker: a new epoch forgets the old epoch's sequences, as
        Kafka's producer state does (so the next transaction starts at sequence 0)."""
        state = self._entry(producer_id, epoch, partition)
        state.coordinator_epoch = coordinator_epoch
        state.last_timestamp = timestamp
        self.set_epoch(producer_id, epoch)

    def _entry(
        self, producer_id: int, epoch: int, partition: PartitionKey
    ) -> _PartitionProducerState:
        key = (producer_id, partition)
        state = self._partitions.get(key)
        if state is None:
            state = self._partitions[key] = _PartitionProducerState(epoch)
        elif epoch != state.epoch:
            state.epoch = epoch
            state.batches.clear()
        return state

    def entry(self, producer_id: int, partition: PartitionKey) -> ActiveProducer | None:
        """The producer's state on one partition, if it wrote there."""
        state = self._partitions.get((producer_id, partition))
        if state is None:
            return None
        return _active(producer_id, state)

    def active_on(self, partition: PartitionKey) -> list[ActiveProducer]:
        """Producers with state on `partition`, by producer id (DescribeProducers)."""
        return [
            _active(producer_id, state)
            for (producer_id, key), state in sorted(self._partitions.items())
            if key == partition
        ]

    def last_records(self, partition: PartitionKey) -> dict[int, tuple[int | None, int]]:
        """Producer id -> (offset of the last data record it wrote to `partition`, or
        None when a marker of a newer epoch came after it; its epoch): Kafka's
        `lastRecordsOfActiveProducers`, whose batches the log cleaner keeps."""
        out: dict[int, tuple[int | None, int]] = {}
        for (producer_id, key), state in self._partitions.items():
            if key != partition:
                continue
            last_data = None
            if state.batches:
                last = state.batches[-1]
                span = (last.last_sequence - last.first_sequence) % _SEQUENCE_SPACE
                last_data = last.base_offset + span
            out[producer_id] = (last_data, state.epoch)
        return out

    def forget_topic(self, topic: str) -> None:
        """A deleted topic's partitions start afresh if the name is reused."""
        for key in [k for k in self._partitions if k[1][0] == topic]:
            del self._partitions[key]


def _active(producer_id: int, state: _PartitionProducerState) -> ActiveProducer:
    return ActiveProducer(
        producer_id,
        state.epoch,
        state.batches[-1].last_sequence if state.batches else -1,
        state.last_timestamp,
        state.coordinator_epoch,
    )
