"""Every broker setting kafkatest knows, in one table, and the emulator's own configs.

`SETTINGS` declares each Kafka broker property once: the `BrokerSettings` field that
holds it in the emulator (if any), the value kafkatest starts its `kafka` backend with
(if not Kafka's default), and whether ``config=`` may change it on the emulator. From it
come the emulator's accepted settings (`kafkatest.brokers.config.EMULATOR_SETTINGS`),
the `kafka` backend's server.properties defaults
(`kafkatest.brokers.kafka_properties.TEST_SETTINGS`) and what the emulator's
DescribeConfigs shows (`broker_configs`). Where kafkatest runs real Kafka with a
non-default value to make tests quick, the emulator's default is that same value
(checked by tests/test_broker_settings_table.py), so a test sees the same timing on
both backends.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BrokerSettings:
    """Broker-wide configs, with Kafka's defaults unless tests need otherwise."""

    auto_create_topics: bool = True
    num_partitions: int = 1
    default_replication_factor: int = 1
    message_max_bytes: int = 1048588
    #: Kafka's default is 5 minutes; kafkatest runs real Kafka with 500 ms too (see
    #: kafka_properties.TEST_SETTINGS), so aged-out data vanishes alike on both backends.
    #: Measured on the state's clock.
    retention_check_interval_ms: int = 500
    #: Kafka's log.cleaner.backoff.ms is 15 s; kafkatest runs real Kafka with 500 ms
    #: too (kafka_properties.TEST_SETTINGS), so compaction comes as soon on both backends.
    log_cleaner_backoff_ms: int = 500
    delete_topic_enable: bool = True
    #: Kafka's default is 10 s; kafkatest runs real Kafka with 500 ms too, so a timed-out
    #: transaction is aborted as promptly on both backends. On the state's clock.
    transaction_abort_interval_ms: int = 500
    #: The longest transaction.timeout.ms a producer may ask for (Kafka's default).
    transaction_max_timeout_ms: int = 900_000
    #: Kafka's group.consumer.heartbeat.interval.ms / session.timeout.ms (defaults
    #: 5000 / 45000): kafkatest runs real Kafka with these shorter ones (and the
    #: matching minimums, see kafka_properties.TEST_SETTINGS) so consumer groups settle fast.
    group_consumer_heartbeat_interval_ms: int = 500
    group_consumer_session_timeout_ms: int = 10000
    #: Kafka's group.initial.rebalance.delay.ms (default 3000): how long a new classic
    #: group waits for more members before its first generation, extended by each new
    #: member up to the rebalance timeout. kafkatest runs real Kafka with 0
    #: (kafka_properties.TEST_SETTINGS), so 0 here too: both backends form groups alike.
    group_initial_rebalance_delay_ms: int = 0
    #: Kafka's default is 50; kafkatest runs real Kafka with 1 (one node, quick
    #: start), and __consumer_offsets gets this many partitions on both backends.
    offsets_topic_num_partitions: int = 1
    #: Broker configs that set topics' defaults (`log.retention.hours`,
    #: `log.cleanup.policy`, ...: the `log.*` twins of topic configs), by Kafka name,
    #: as (name, value) pairs; a topic without its own value runs with these.
    topic_defaults: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Setting:
    """One Kafka broker property as kafkatest knows it."""

    name: str
    #: The `BrokerSettings` field that holds it in the emulator; None where the
    #: emulator behaves as `kafka_backend` says but has nothing to change.
    field: str | None = None
    #: What kafkatest starts its `kafka` backend with; None for Kafka's default.
    kafka_backend: str | None = None
    #: Whether ``config=`` may set it on the emulator.
    settable: bool = True


SETTINGS: tuple[Setting, ...] = (
    Setting("auto.create.topics.enable", "auto_create_topics", "true"),
    Setting("num.partitions", "num_partitions", "1"),
    Setting("default.replication.factor", "default_replication_factor"),
    Setting("message.max.bytes", "message_max_bytes"),
    Setting("delete.topic.enable", "delete_topic_enable", "true"),
    Setting("log.retention.check.interval.ms", "retention_check_interval_ms", "500"),
    # Kafka's cleaner sleeps 15 s whenever it finds nothing to clean; 500 ms lets
    # compacted topics compact within a test's patience.
    Setting("log.cleaner.backoff.ms", "log_cleaner_backoff_ms", "500"),
    Setting(
        "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        "transaction_abort_interval_ms",
        "500",
    ),
    Setting("transaction.max.timeout.ms", "transaction_max_timeout_ms"),
    # KIP-848 consumer groups: Kafka's 5 s heartbeats and 45 s sessions made short.
    Setting("group.consumer.heartbeat.interval.ms", "group_consumer_heartbeat_interval_ms", "500"),
    Setting("group.consumer.session.timeout.ms", "group_consumer_session_timeout_ms", "10000"),
    Setting("group.initial.rebalance.delay.ms", "group_initial_rebalance_delay_ms", "0"),
    Setting("offsets.topic.num.partitions", "offsets_topic_num_partitions", "1", settable=False),
    # What one node needs, and the minimums that let the short group timeouts above
    # be asked for: the emulator behaves so already.
    Setting("offsets.topic.replication.factor", kafka_backend="1"),
    Setting("transaction.state.log.replication.factor", kafka_backend="1"),
    Setting("transaction.state.log.min.isr", kafka_backend="1"),
    Setting("transaction.state.log.num.partitions", kafka_backend="1"),
    Setting("share.coordinator.state.topic.replication.factor", kafka_backend="1"),
    Setting("share.coordinator.state.topic.min.isr", kafka_backend="1"),
    Setting("group.consumer.min.heartbeat.interval.ms", kafka_backend="500"),
    Setting("group.consumer.min.session.timeout.ms", kafka_backend="10000"),
    # Kafka 4.3 computes a KIP-848 group's next target assignment at most once per
    # group.consumer.assignment.interval.ms (1 s by default); at 0 it does so at once,
    # as Kafka 4.1 did and the emulator does, so members get partitions alike.
    Setting("group.consumer.assignment.interval.ms", kafka_backend="0"),
    Setting("log.initial.task.delay.ms", kafka_backend="0"),
    # A deleted segment's files go at once, as near as Kafka allows: at 0, Kafka 4.1's
    # scheduler re-runs its file deletion task without a pause, and an idle broker
    # burns 7 % of a core (2.6 % at 100 ms; clients see the same either way).
    Setting("log.segment.delete.delay.ms", kafka_backend="100"),
    Setting("file.delete.delay.ms", kafka_backend="0"),
)

#: The settings with a `BrokerSettings` field, by Kafka name.
FIELDS: dict[str, str] = {s.name: s.field for s in SETTINGS if s.field is not None}
#: What the `kafka` backend starts with (Kafka's name -> value).
KAFKA_BACKEND: dict[str, str] = {
    s.name: s.kafka_backend for s in SETTINGS if s.kafka_backend is not None
}


def as_kafka_text(value: object) -> str:
    """A `BrokerSettings` value as Kafka writes it (``true``, ``500``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def by_kafka_name(settings: BrokerSettings) -> dict[str, str]:
    """`settings` by Kafka config name (every field of the table), then the topic defaults."""
    return {
        **{name: as_kafka_text(getattr(settings, field)) for name, field in FIELDS.items()},
        **dict(settings.topic_defaults),
    }
