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
    read_header,
    validate,
)
from kafkatest.emulator.protocol.control_batches import marker_batch
from kafkatest.emulator.protocol.record_rewrite import single_record_batch
from kafkatest.emulator.state import cleaner, replicas
from kafkatest.emulator.state.acls import Authorizer
from kafkatest.emulator.state.client_quotas import ClientQuotaStore
from kafkatest.emulator.state.clock import Clock
from kafkatest.emulator.state.cluster import Cluster
from kafkatest.emulator.state.config_store import NamedConfigs
from kafkatest.emulator.state.credentials import CredentialStore
from kafkatest.emulator.state.errors import (
    CorruptMessage,
    InvalidConfig,
    InvalidProducerEpoch,
    InvalidRecord,
    InvalidReplicationFactor,
    InvalidTxnState,
    MessageTooLarge,
    ProducerFenced,
    TopicDeletionDisabled,
    TransactionAbortable,
)
from kafkatest.emulator.state.features import FeatureLevels
from kafkatest.emulator.state.group_records import GroupRecords
from kafkatest.emulator.state.log import PartitionLog
from kafkatest.emulator.state.notify import AppendSignal
from kafkatest.emulator.state.offsets import OffsetStore
from kafkatest.emulator.state.producers import AppendedBatch, ProducerRegistry
from kafkatest.emulator.state.record_validation import checked_max_timestamp
from kafkatest.emulator.state.topic_configs import (
    INTERNAL_TOPIC_CONFIGS,
    TOPIC_CONFIGS,
    check_topic_configs,
    validate_topic_config,
)
from kafkatest.emulator.state.topics import Topic, TopicRegistry
from kafkatest.emulator.state.transactions import TransactionCoordinator


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
    #: Kafka's log.cleaner.backoff.ms is 15 s; kafkatest runs real Kafka with 500 ms
    #: too (kafka_process.TEST_SETTINGS), so compaction comes as soon on both backends.
    log_cleaner_backoff_ms: int = 500
    delete_topic_enable: bool = True
    #: Kafka's default is 10 s; kafkatest runs real Kafka with 500 ms too, so a timed-out
    #: transaction is aborted as promptly on both backends. On the state's clock.
    transaction_abort_interval_ms: int = 500
    #: The longest transaction.timeout.ms a producer may ask for (Kafka's default).
    transaction_max_timeout_ms: int = 900_000
    #: Kafka's group.consumer.heartbeat.interval.ms / session.timeout.ms (defaults
    #: 5000 / 45000): kafkatest runs real Kafka with these shorter ones (and the
    #: matching minimums, see kafka_process.TEST_SETTINGS) so consumer groups settle fast.
    group_consumer_heartbeat_interval_ms: int = 500
    group_consumer_session_timeout_ms: int = 10000
    #: Kafka's group.initial.rebalance.delay.ms (default 3000): how long a new classic
    #: group waits for more members before its first generation, extended by each new
    #: member up to the rebalance timeout. kafkatest runs real Kafka with 0
    #: (kafka_process.TEST_SETTINGS), so 0 here too: both backends form groups alike.
    group_initial_rebalance_delay_ms: int = 0
    #: Kafka's default is 50; kafkatest runs real Kafka with 1 (one node, quick
    #: start), and __consumer_offsets gets this many partitions on both backends.
    offsets_topic_num_partitions: int = 1


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


class EmulatorState:
    def __init__(self, brokers: int = 1, settings: BrokerSettings | None = None) -> None:
        self.settings = settings or BrokerSettings()
        self.cluster = Cluster(brokers)
        self.topics = TopicRegistry()
        self.producers = ProducerRegistry()
        self.offsets = OffsetStore()
        self.offsets.records = GroupRecords(self)
        self.clock = Clock()
        self.appends = AppendSignal()
        #: PLAIN users and SCRAM credentials (used only by SASL listeners).
        self.credentials = CredentialStore()
        #: Slot for the group coordinator (see `state.groups`), set by its handlers.
        self.groups: Any = None
        self.transactions = TransactionCoordinator(self)
        #: Slot for the KIP-848 consumer group coordinator (`state.consumer_groups`).
        self.consumer_groups: Any = None
        #: The ACLs and their decisions; None while ACLs are off (nothing is checked).
        self.acls: Authorizer | None = None
        #: Per-group config overrides (ConfigResource type GROUP).
        self.group_configs = NamedConfigs()
        #: Client quotas (kept and described; the emulator never throttles).
        self.client_quotas = ClientQuotaStore()
        #: Client metrics subscriptions (ConfigResource type CLIENT_METRICS, KIP-714).
        self.client_metrics = NamedConfigs()
        #: Finalized feature levels (ApiVersions, UpdateFeatures).
        self.features = FeatureLevels(lambda: self.cluster.controller_id)
        #: When this cluster started, on its clock (DescribeQuorum's idle metadata log).
        self.started_ms = self.clock.now_ms()
        self._last_retention_check_ms = self.started_ms
        self._last_txn_check_ms = self._last_retention_check_ms
        self._last_cleaner_run_ms = self._last_retention_check_ms

    # -- topics ---------------------------------------------------------------------

    def create_topic(
        self,
        name: str,
        partitions: int = -1,
        replication_factor: int = -1,
        configs: Mapping[str, str | None] | None = None,
        validate_only: bool = False,
        assignments: list[list[int]] | None = None,
    ) -> Topic | None:
        """A new topic; `assignments` (checked by the caller) places its replicas by hand."""
        if assignments:
            partitions, replication_factor = len(assignments), len(assignments[0])
        if partitions == -1:
            partitions = self.settings.num_partitions
        if replication_factor == -1:
            replication_factor = self.settings.default_replication_factor
        brokers = len(self.cluster.live_broker_ids)
        if not assignments and (replication_factor <= 0 or replication_factor > brokers):
            raise InvalidReplicationFactor(
                f"Unable to replicate the partition {replication_factor} time(s): "
                f"The target replication factor of {replication_factor} cannot be reached "
                f"because only {brokers} broker(s) are registered."
            )
        configs = dict(configs or {})
        # Validated before anything is sized by `partitions`, which a client chose.
        self.topics.check_absent(name)
        self.topics.check_new(name, partitions, configs)
        if validate_only:
            return None
        start = self.cluster.next_leader_start()
        placed = assignments or [
            self.cluster.replicas_of(start, p, replication_factor) for p in range(partitions)
        ]
        return self.topics.create(name, partitions, placed, configs, leader_start=start)

    def delete_topic(self, name: str) -> Topic:
        if not self.settings.delete_topic_enable:
            raise TopicDeletionDisabled("Topic deletion is disabled.")
        topic = self.topics.delete(name)
        self.producers.forget_topic(name)
        self.offsets.forget_topic(name)
        self.transactions.forget_topic(name)
        self.appends.notify()
        return topic

    def add_partitions(self, name: str, total: int, validate_only: bool = False) -> Topic:
        topic = self.topics.get(name)
        current = len(topic.partitions)
        self.topics.check_growth(topic, total)
        if validate_only:
            return topic
        factor = len(topic.partitions[0].replicas) if topic.partitions else 1
        placed = [
            self.cluster.replicas_of(topic.leader_start, p, factor) for p in range(current, total)
        ]
        return self.topics.add_partitions(name, total, placed)

    def move_leader(self, name: str, partition: int, leader_id: int) -> tuple[int, int]:
        """Make `leader_id` lead the partition; returns (old leader, new leader epoch).

        A real change of leader is an election: Kafka's controller bumps the leader
        epoch and the new leader starts that epoch at its log end. Naming the
        current leader changes nothing, as a preferred election of the leader would.
        """
        chosen = self.topics.get(name).partition(partition)
        old = chosen.leader_id
        replicas.move_leader(self.cluster, chosen, leader_id)
        return old, chosen.leader_epoch

    def stop_broker(self, broker_id: int) -> None:
        """One broker goes down (controlled shutdown): see `replicas`."""
        replicas.stop_broker(self.cluster, self.topics, broker_id)
        self.appends.notify()

    def start_broker(self, broker_id: int) -> None:
        replicas.start_broker(self.cluster, self.topics, broker_id)
        self.appends.notify()

    def reelect_leaders(self) -> None:
        """After a broker restart: Kafka (one node) took each partition leaderless at
        shutdown and gave it back at start-up, two epochs later."""
        for topic in self.topics:
            for partition in topic.partitions:
                partition.elect(partition.leader_id, epochs=2)

    def set_topic_config(self, name: str, key: str, value: str | None) -> None:
        """Set (or with None, reset to default) one config of topic `name`."""
        topic = self.topics.get(name)
        overrides = dict(topic.overrides)  # a new dict: see Topic.roll_limits
        if value is None:
            if key not in TOPIC_CONFIGS and key not in INTERNAL_TOPIC_CONFIGS:
                raise InvalidConfig(f"Unknown topic config name: {key}")
            overrides.pop(key, None)
        else:
            overrides[key] = validate_topic_config(key, value)
        topic.overrides = check_topic_configs(overrides)

    # -- writes ---------------------------------------------------------------------

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

    # -- retention and compaction -----------------------------------------------------

    def maybe_enforce_retention(self) -> None:
        """Apply retention, run the log cleaner and abort timed-out transactions when
        their intervals have passed on the state's clock (Produce, Fetch and ListOffsets
        call this)."""
        now = self.clock.now_ms()
        if now - self._last_retention_check_ms >= self.settings.retention_check_interval_ms:
            self.enforce_retention()
        if now - self._last_cleaner_run_ms >= self.settings.log_cleaner_backoff_ms:
            self.run_cleaner()
        self.maybe_abort_timed_out_transactions()

    def maybe_abort_timed_out_transactions(self) -> None:
        """Kafka's periodic abort of transactions past their timeout, on the state's clock."""
        now = self.clock.now_ms()
        if now - self._last_txn_check_ms >= self.settings.transaction_abort_interval_ms:
            self._last_txn_check_ms = now
            self.transactions.abort_timed_out()

    def enforce_retention(self) -> None:
        """Delete every segment that breaks its topic's retention.ms / retention.bytes now."""
        now = self.clock.now_ms()
        self._last_retention_check_ms = now
        for topic in self.topics:
            if "delete" not in topic.config("cleanup.policy"):
                continue
            retention_ms = topic.int_config("retention.ms")
            retention_bytes = topic.int_config("retention.bytes")
            for partition in topic.partitions:
                partition.log.apply_retention(now, retention_ms, retention_bytes)

    def run_cleaner(self, only: str | None = None, force: bool = False) -> None:
        """One cleaner pass over every compacted log that Kafka's cleaner would pick now
        (or, with `force`, every compacted log with something cleanable)."""
        now = self.clock.now_ms()
        self._last_cleaner_run_ms = now
        for topic in self.topics:
            if not topic.compacted or (only is not None and topic.name != only):
                continue
            config = topic.cleaner_config()
            for partition in topic.partitions:
                log = partition.log
                part = cleaner.cleanable(log, config, now, log.last_stable_offset)
                if part is None or part.cleanable_bytes == 0:
                    continue
                if force or part.due(config.min_cleanable_ratio):
                    producers = self.producers.last_records((topic.name, partition.index))
                    cleaner.clean(log, config, part, now, producers)

    def compact_now(self, name: str, roll: bool = True) -> dict[int, int]:
        """Roll every partition's active segment with a marker record (unless not
        `roll`) and clean what is cleanable, as `Faults.compact_now` makes real Kafka
        do; returns, per partition, the offset the cleaner reached (the marker's,
        unless something held it back)."""
        topic = self.topics.get(name)
        if not topic.compacted:
            raise InvalidConfig(
                f"topic {name} has cleanup.policy={topic.config('cleanup.policy')}: "
                "set cleanup.policy=compact (or compact,delete) to compact it"
            )
        now = self.clock.now_ms()
        marker = single_record_batch(cleaner.COMPACT_NOW_KEY, None, now)
        header = read_header(marker)
        for partition in topic.partitions if roll else ():
            partition.log.roll(now, topic.roll_limits)
            self.append(topic, partition.index, header, marker)
        self.run_cleaner(only=name, force=True)
        reached = {}
        for partition in topic.partitions:
            checkpoint = partition.log.cleaner_checkpoint
            reached[partition.index] = (
                partition.log.log_start_offset if checkpoint is None else checkpoint
            )
        return reached

    def log_of(self, topic: str, partition: int) -> PartitionLog:
        return self.topics.get(topic).partition(partition).log
