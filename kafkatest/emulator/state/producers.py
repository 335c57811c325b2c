"""Idempotent producer state: ids, epochs and recent sequences per partition.

Kafka dedupes retried batches by remembering, per producer and partition, the
last five batches' sequence ranges and where they landed. A retry of one of them
is answered with its original offset instead of being appended twice.
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


PartitionKey = tuple[str, int]


class ProducerRegistry:
    def __init__(self) -> None:
        self._next_id = 1000
        self._epochs: dict[int, int] = {}
        self._partitions: dict[tuple[int, PartitionKey], _PartitionProducerState] = {}

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
        producer_id = self._next_id
        self._next_id += 1
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
        self, producer_id: int, epoch: int, partition: PartitionKey, batch: AppendedBatch
    ) -> None:
        key = (producer_id, partition)
        state = self._partitions.get(key)
        if state is None or epoch != state.epoch:
            state = _PartitionProducerState(epoch)
            self._partitions[key] = state
        state.batches.append(batch)
        if self._epochs.get(producer_id, -1) < epoch:
            self._epochs[producer_id] = epoch

    def forget_topic(self, topic: str) -> None:
        """A deleted topic's partitions start afresh if the name is reused."""
        for key in [k for k in self._partitions if k[1][0] == topic]:
            del self._partitions[key]
