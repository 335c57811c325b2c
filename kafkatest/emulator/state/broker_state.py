"""Everything the emulated cluster remembers, and the operations that change it.

Handlers call these operations rather than poking at logs, so every path that
writes (Produce, DeleteRecords, retention, topic deletion) keeps producer state,
committed offsets and waiting fetches consistent.

`EmulatorState` holds the cluster's stores and its topic operations; writing to a
partition (partition_writes.py) and the periodic retention, cleaner and
transaction timeouts (log_maintenance.py) are objects it holds, each in its own module.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafkatest._ground.held import held
from kafkatest.emulator.state import replicas
from kafkatest.emulator.state.acls import Authorizer
from kafkatest.emulator.state.broker_configs import (
    broker_wiring,
    kafka_settings,
    static_settings,
)
from kafkatest.emulator.state.broker_loggers import BrokerLoggers
from kafkatest.emulator.state.broker_settings import BrokerSettings
from kafkatest.emulator.state.client_quotas import ClientQuotaStore
from kafkatest.emulator.state.clock import Clock
from kafkatest.emulator.state.cluster import Cluster
from kafkatest.emulator.state.config_store import NamedConfigs
from kafkatest.emulator.state.credentials import CredentialStore
from kafkatest.emulator.state.delegation_tokens import DelegationTokens
from kafkatest.emulator.state.dynamic_broker_configs import DynamicBrokerConfigs
from kafkatest.emulator.state.errors import (
    InvalidConfig,
    InvalidReplicationFactor,
    TopicDeletionDisabled,
)
from kafkatest.emulator.state.features import FeatureLevels
from kafkatest.emulator.state.groups.classic.coordinator import (
    GroupCoordinator,
    GroupCoordinatorConfig,
)
from kafkatest.emulator.state.groups.classic.rebalance import NEW_GROUP_JOIN_WINDOW_MS
from kafkatest.emulator.state.groups.clock import PolledClock
from kafkatest.emulator.state.groups.consumer.coordinator import ConsumerGroupCoordinator
from kafkatest.emulator.state.groups.consumer.settings import ConsumerGroupConfig, GroupIntervals
from kafkatest.emulator.state.groups.migration import installed as install_migration
from kafkatest.emulator.state.groups.offsets import OffsetStore
from kafkatest.emulator.state.groups.records import GroupRecords
from kafkatest.emulator.state.log import PartitionLog
from kafkatest.emulator.state.log_maintenance import LogMaintenance
from kafkatest.emulator.state.notify import AppendSignal
from kafkatest.emulator.state.partition_writes import (
    AppendResult,
    PartitionWrites,
    TransactionalProduce,
)
from kafkatest.emulator.state.producers import ProducerRegistry
from kafkatest.emulator.state.topic_configs import (
    INTERNAL_TOPIC_CONFIGS,
    TOPIC_CONFIGS,
    check_topic_configs,
    validate_topic_config,
)
from kafkatest.emulator.state.topics import Topic, TopicRegistry
from kafkatest.emulator.state.transactions import TransactionCoordinator

__all__ = ["AppendResult", "BrokerSettings", "EmulatorState", "TransactionalProduce"]


class EmulatorState:
    """The whole emulated cluster: its stores and coordinators, built here, and the
    writer and log maintenance it holds (``writes``, ``maintenance``)."""

    def __init__(self, brokers: int = 1, settings: BrokerSettings | None = None) -> None:
        self.settings = settings or BrokerSettings()
        self.cluster = Cluster(brokers)
        #: Broker configs changed while the cluster runs, and topics' broker-level
        #: defaults through them.
        self.broker_configs = DynamicBrokerConfigs(
            static_settings(
                kafka_settings(self.settings), given=dict(self.settings.topic_defaults)
            ),
            wiring=lambda broker_id: broker_wiring(self.cluster, broker_id),
            feature_level=lambda feature: self.features.level(feature),
        )
        self.topics = TopicRegistry(self.broker_configs)
        #: The log4j loggers Kafka's BROKER_LOGGER resource lists and changes.
        self.loggers = BrokerLoggers()
        self.producers = ProducerRegistry()
        self.offsets = OffsetStore()
        self.offsets.records = GroupRecords(self)
        self.clock = Clock()
        self.appends = AppendSignal()
        #: PLAIN users and SCRAM credentials (used only by SASL listeners).
        self.credentials: CredentialStore = CredentialStore()
        #: Delegation tokens, off until a secret is set; SCRAM logins read them.
        self.delegation_tokens: DelegationTokens = DelegationTokens(self.clock.now_ms)
        self.credentials.tokens = self.delegation_tokens
        self.transactions = TransactionCoordinator(self)
        #: Every write to a partition's log (append, markers, DeleteRecords).
        self.writes = PartitionWrites(
            self.clock, self.topics, self.producers, self.transactions, self.appends
        )
        #: The ACLs and their decisions; None while ACLs are off (nothing is checked).
        self.acls: Authorizer | None = None
        #: Per-group config overrides (ConfigResource type GROUP).
        self.group_configs = NamedConfigs()
        #: Client quotas (kept and described; the emulator never throttles).
        self.client_quotas = ClientQuotaStore()
        #: Client metrics subscriptions (ConfigResource type CLIENT_METRICS, KIP-714).
        self.client_metrics = NamedConfigs()
        #: Finalized feature levels (ApiVersions, UpdateFeatures).
        self.features: FeatureLevels = FeatureLevels(lambda: self.cluster.controller_id)
        #: The classic group coordinator (JoinGroup, SyncGroup...), its timers on
        #: this cluster's clock so that advancing the clock expires sessions too.
        self.groups = GroupCoordinator(
            PolledClock(self.clock.now_ms),
            GroupCoordinatorConfig(
                initial_rebalance_delay_ms=self.settings.group_initial_rebalance_delay_ms,
                new_group_join_window_ms=NEW_GROUP_JOIN_WINDOW_MS,
            ),
            offsets=self.offsets,
        )
        #: The KIP-848 consumer group coordinator (ConsumerGroupHeartbeat), with
        #: classic groups migrating to it and back (`group_migration`).
        consumer_config = ConsumerGroupConfig(
            heartbeat_interval_ms=self.settings.group_consumer_heartbeat_interval_ms,
            session_timeout_ms=self.settings.group_consumer_session_timeout_ms,
        )
        self.consumer_groups = ConsumerGroupCoordinator(
            PolledClock(self.clock.now_ms),
            self.topics,
            consumer_config,
            GroupIntervals(consumer_config, self.group_configs.configs),
        )
        install_migration(self.groups, self.consumer_groups)
        #: When this cluster started, on its clock (DescribeQuorum's idle metadata log).
        self.started_ms = self.clock.now_ms()
        #: Retention, the cleaner and transaction timeouts, on this cluster's clock.
        self.maintenance = LogMaintenance(self.settings, self.writes, self.started_ms)

    # -- what the writer and the log maintenance it holds do, as its own ----------------

    append = held("writes", PartitionWrites.append)
    write_marker = held("writes", PartitionWrites.write_marker)
    delete_records = held("writes", PartitionWrites.delete_records)
    maybe_enforce_retention = held("maintenance", LogMaintenance.maybe_enforce_retention)
    maybe_abort_timed_out_transactions = held(
        "maintenance", LogMaintenance.maybe_abort_timed_out_transactions
    )
    enforce_retention = held("maintenance", LogMaintenance.enforce_retention)
    run_cleaner = held("maintenance", LogMaintenance.run_cleaner)
    compact_now = held("maintenance", LogMaintenance.compact_now)
    shift_periodic_tasks = held("maintenance", LogMaintenance.shift_periodic_tasks)

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

    def log_of(self, topic: str, partition: int) -> PartitionLog:
        return self.topics.get(topic).partition(partition).log
