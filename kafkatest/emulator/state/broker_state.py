"""Everything the emulated cluster remembers, and the operations that change it.

Handlers call these operations rather than poking at logs, so every path that
writes (Produce, DeleteRecords, retention, topic deletion) keeps producer state,
committed offsets and waiting fetches consistent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafkatest.emulator.protocol.batches import (
    NO_PRODUCER_ID,
    BatchError,
    BatchHeader,
    place,
    validate,
)
from kafkatest.emulator.state.clock import Clock
from kafkatest.emulator.state.cluster import Cluster
from kafkatest.emulator.state.errors import (
    CorruptMessage,
    InvalidConfig,
    InvalidRecord,
    InvalidReplicationFactor,
    InvalidRequest,
    InvalidTxnState,
    MessageTooLarge,
    TopicDeletionDisabled,
)
from kafkatest.emulator.state.log import PartitionLog
from kafkatest.emulator.state.notify import AppendSignal
from kafkatest.emulator.state.offsets import OffsetStore
from kafkatest.emulator.state.producers import AppendedBatch, ProducerRegistry
from kafkatest.emulator.state.topic_configs import TOPIC_CONFIGS, validate_topic_config
from kafkatest.emulator.state.topics import Topic, TopicRegistry


@dataclass(frozen=True)
class BrokerSettings:
    """Broker-wide configs, with Kafka's defaults unless tests need otherwise."""

    auto_create_topics: bool = True
    num_partitions: int = 1
    default_replication_factor: int = 1
    message_max_bytes: int = 1048588
    #: Kafka's default is 5 minutes; kafkatest runs real Kafka with 500 ms too (see
    #: kafka_process.TEST_SETTINGS), so aged-out data vanishes alike on both backends.
    #: Measured on the state's clock.
    retention_check_interval_ms: int = 500
    delete_topic_enable: bool = True


@dataclass(frozen=True, slots=True)
class AppendResult:
    base_offset: int
    #: -1 unless the topic uses LogAppendTime.
    log_append_time: int
    log_start_offset: int
    duplicate: bool = False


class EmulatorState:
    def __init__(self, brokers: int = 1, settings: BrokerSettings | None = None) -> None:
        self.settings = settings or BrokerSettings()
        self.cluster = Cluster(brokers)
        self.topics = TopicRegistry()
        self.producers = ProducerRegistry()
        self.offsets = OffsetStore()
        self.clock = Clock()
        self.appends = AppendSignal()
        #: Slot for the group coordinator (see `state.groups`), set by its handlers.
        self.groups: Any = None
        self._last_retention_check_ms = self.clock.now_ms()

    # -- topics ---------------------------------------------------------------------

    def create_topic(
        self,
        name: str,
        partitions: int = -1,
        replication_factor: int = -1,
        configs: Mapping[str, str | None] | None = None,
        validate_only: bool = False,
    ) -> Topic | None:
        if partitions == -1:
            partitions = self.settings.num_partitions
        if replication_factor == -1:
            replication_factor = self.settings.default_replication_factor
        brokers = len(self.cluster.broker_ids)
        if replication_factor <= 0 or replication_factor > brokers:
            raise InvalidReplicationFactor(
                f"Unable to replicate the partition {replication_factor} time(s): "
                f"The target replication factor of {replication_factor} cannot be reached "
                f"because only {brokers} broker(s) are registered."
            )
        configs = dict(configs or {})
        if validate_only:
            self.topics.check_absent(name)
            self.topics.check_new(name, partitions, configs)
            return None
        start = self.cluster.next_leader_start()
        leaders = [self.cluster.leader_of(start, p) for p in range(partitions)]
        return self.topics.create(name, partitions, leaders, configs, leader_start=start)

    def delete_topic(self, name: str) -> Topic:
        if not self.settings.delete_topic_enable:
            raise TopicDeletionDisabled("Topic deletion is disabled.")
        topic = self.topics.delete(name)
        self.producers.forget_topic(name)
        self.offsets.forget_topic(name)
        self.appends.notify()
        return topic

    def add_partitions(self, name: str, total: int, validate_only: bool = False) -> Topic:
        topic = self.topics.get(name)
        current = len(topic.partitions)
        leaders = [
            self.cluster.leader_of(topic.leader_start, p) for p in range(current, max(total, 0))
        ]
        if validate_only:
            self.topics.check_growth(topic, total)
            return topic
        return self.topics.add_partitions(name, total, leaders)

    def move_leader(self, name: str, partition: int, leader_id: int) -> tuple[int, int]:
        """Make `leader_id` lead the partition; returns (old leader, new leader epoch).

        A real change of leader is an election: Kafka's controller bumps the leader
        epoch and the new leader starts that epoch at its log end. Naming the
        current leader changes nothing, as a preferred election of the leader would.
        """
        if leader_id not in self.cluster.broker_ids:
            raise InvalidRequest(
                f"there is no broker {leader_id}; brokers are {self.cluster.broker_ids}"
            )
        chosen = self.topics.get(name).partition(partition)
        old = chosen.leader_id
        if leader_id != old:
            chosen.elect(leader_id)
        return old, chosen.leader_epoch

    def reelect_leaders(self) -> None:
        """After a broker restart: Kafka (one node) took each partition leaderless at
        shutdown and gave it back at start-up, two epochs later."""
        for topic in self.topics:
            for partition in topic.partitions:
                partition.elect(partition.leader_id, epochs=2)

    def set_topic_config(self, name: str, key: str, value: str | None) -> None:
        """Set (or with None, reset to default) one config of topic `name`."""
        topic = self.topics.get(name)
        if value is None:
            if key not in TOPIC_CONFIGS:
                raise InvalidConfig(f"Unknown topic config name: {key}")
            topic.overrides.pop(key, None)
        else:
            topic.overrides[key] = validate_topic_config(key, value)

    def broker_configs(self) -> dict[str, tuple[str, str]]:
        """Broker configs as DescribeConfigs shows them: name -> (value, type)."""
        s = self.settings
        return {
            "auto.create.topics.enable": (str(s.auto_create_topics).lower(), "BOOLEAN"),
            "default.replication.factor": (str(s.default_replication_factor), "INT"),
            "delete.topic.enable": (str(s.delete_topic_enable).lower(), "BOOLEAN"),
            "log.retention.check.interval.ms": (str(s.retention_check_interval_ms), "LONG"),
            "message.max.bytes": (str(s.message_max_bytes), "INT"),
            "num.partitions": (str(s.num_partitions), "INT"),
            "offsets.topic.replication.factor": ("1", "SHORT"),
            "transaction.state.log.replication.factor": ("1", "SHORT"),
        }

    # -- writes ---------------------------------------------------------------------

    def append(
        self,
        topic: Topic,
        partition: int,
        header: BatchHeader,
        batch: bytes,
    ) -> AppendResult:
        """Validate and store one produced batch, deduplicating idempotent retries."""
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
        if header.is_transactional:
            raise InvalidTxnState(
                "transactional batches need a transaction coordinator, which this broker lacks"
            )
        key = (topic.name, partition)
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
        max_timestamp = header.max_timestamp
        if topic.config("message.timestamp.type") == "LogAppendTime":
            log_append_time = max_timestamp = self.clock.now_ms()
        placed = place(
            batch,
            log.log_end_offset,
            topic.partition(partition).leader_epoch,
            log_append_time if log_append_time >= 0 else None,
        )
        base_offset = log.append(placed, header.record_count, max_timestamp)
        if idempotent:
            self.producers.record(
                header.producer_id,
                header.producer_epoch,
                key,
                AppendedBatch(
                    header.base_sequence, header.last_sequence, base_offset, log_append_time
                ),
            )
        self.appends.notify()
        return AppendResult(base_offset, log_append_time, log.log_start_offset)

    def delete_records(self, topic: Topic, partition: int, before_offset: int) -> int:
        """DeleteRecords: -1 means the high watermark; returns the new log start."""
        log = topic.partition(partition).log
        log.delete_before(log.high_watermark if before_offset == -1 else before_offset)
        return log.log_start_offset

    # -- retention --------------------------------------------------------------------

    def maybe_enforce_retention(self) -> None:
        """Apply retention if Kafka's check interval has passed on the state's clock."""
        now = self.clock.now_ms()
        if now - self._last_retention_check_ms >= self.settings.retention_check_interval_ms:
            self.enforce_retention()

    def enforce_retention(self) -> None:
        """Delete every batch that breaks its topic's retention.ms / retention.bytes now."""
        now = self.clock.now_ms()
        self._last_retention_check_ms = now
        for topic in self.topics:
            if "delete" not in topic.config("cleanup.policy"):
                continue
            retention_ms = topic.int_config("retention.ms")
            retention_bytes = topic.int_config("retention.bytes")
            for partition in topic.partitions:
                partition.log.apply_retention(now, retention_ms, retention_bytes)

    def log_of(self, topic: str, partition: int) -> PartitionLog:
        return self.topics.get(topic).partition(partition).log
