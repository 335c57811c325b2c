"""The transaction coordinator's model: Kafka's transaction states, one transactional
id's metadata, and what the coordinator needs of the broker state (`TransactionHost`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from kafkatest.emulator.state.broker_settings import BrokerSettings
from kafkatest.emulator.state.clock import Clock
from kafkatest.emulator.state.groups.offsets import CommittedOffset, OffsetStore
from kafkatest.emulator.state.producers import ProducerRegistry


class TransactionHost(Protocol):
    """What the coordinator needs of the broker state (`EmulatorState` is one): its
    clock, settings, producer ids and offsets, and writing a marker to a partition."""

    @property
    def clock(self) -> Clock: ...
    @property
    def settings(self) -> BrokerSettings: ...
    @property
    def producers(self) -> ProducerRegistry: ...
    @property
    def offsets(self) -> OffsetStore: ...

    def write_marker(
        self,
        topic: str,
        partition: int,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        coordinator_epoch: int,
    ) -> None: ...


EMPTY = "Empty"
ONGOING = "Ongoing"
PREPARE_COMMIT = "PrepareCommit"
PREPARE_ABORT = "PrepareAbort"
COMPLETE_COMMIT = "CompleteCommit"
COMPLETE_ABORT = "CompleteAbort"
DEAD = "Dead"
PREPARE_EPOCH_FENCE = "PrepareEpochFence"
STATES = (
    EMPTY,
    ONGOING,
    PREPARE_COMMIT,
    PREPARE_ABORT,
    COMPLETE_COMMIT,
    COMPLETE_ABORT,
    DEAD,
    PREPARE_EPOCH_FENCE,
)


TopicPartition = tuple[str, int]


@dataclass(slots=True)
class TransactionMetadata:
    transactional_id: str
    producer_id: int
    epoch: int
    timeout_ms: int
    state: str = EMPTY
    #: The epoch before the last bump (TV2 EndTxn retries, InitProducerId retries).
    last_epoch: int = -1
    partitions: set[TopicPartition] = field(default_factory=set)
    #: When the last transaction added its first partition (kept after it ends, as
    #: Kafka keeps it); -1 before the first.
    start_ms: int = -1
    last_update_ms: int = -1
    #: group -> offsets a TxnOffsetCommit made pending until the transaction ends.
    pending_offsets: dict[str, dict[TopicPartition, CommittedOffset]] = field(default_factory=dict)
