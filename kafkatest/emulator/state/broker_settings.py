"""Every broker setting kafkatest knows, in one table, and the emulator's own configs.

Each setting is declared once, as a `BrokerSettings` field made by `setting`: its Kafka
property, its value in the emulator and whether kafkatest starts its `kafka` backend
with that same value (so the two backends see the same timing); `SETTINGS` is made
from those fields and the few properties only the `kafka` backend is given
(`KAFKA_ONLY`). From it come the emulator's accepted settings
(`kafkatest.brokers.config.EMULATOR_SETTINGS`), the `kafka` backend's server.properties
defaults (`kafkatest.brokers.kafka_properties.TEST_SETTINGS`), what the emulator's
DescribeConfigs shows (`broker_configs`) and the docs' broker settings reference.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


def setting(kafka_name: str, default: Any, *, on_kafka: bool = False, settable: bool = True) -> Any:
    """A `BrokerSettings` field declared with its row of `SETTINGS`: the Kafka property
    it stands for, its value in the emulator and, with `on_kafka`, kafkatest starts its
    `kafka` backend with that same value (not Kafka's default). `settable`: whether
    ``config=`` may change it on the emulator."""
    return dataclasses.field(default=default, metadata={"kafka": (kafka_name, on_kafka, settable)})


@dataclass(frozen=True)
class BrokerSettings:
    """Broker-wide configs, with Kafka's defaults unless tests need otherwise."""

    auto_create_topics: bool = setting("auto.create.topics.enable", True, on_kafka=True)
    num_partitions: int = setting("num.partitions", 1, on_kafka=True)
    default_replication_factor: int = setting("default.replication.factor", 1)
    message_max_bytes: int = setting("message.max.bytes", 1048588)
    #: Kafka's default is 5 minutes; 500 ms on both backends, so aged-out data vanishes
    #: alike. Measured on the state's clock.
    retention_check_interval_ms: int = setting(
        "log.retention.check.interval.ms", 500, on_kafka=True
    )
    #: Kafka's log.cleaner.backoff.ms is 15 s (its cleaner sleeps that long whenever it
    #: finds nothing to clean); 500 ms on both backends lets compacted topics compact
    #: within a test's patience.
    log_cleaner_backoff_ms: int = setting("log.cleaner.backoff.ms", 500, on_kafka=True)
    delete_topic_enable: bool = setting("delete.topic.enable", True, on_kafka=True)
    #: Kafka's default is 10 s; 500 ms on both backends, so a timed-out transaction is
    #: aborted as promptly. On the state's clock.
    transaction_abort_interval_ms: int = setting(
        "transaction.abort.timed.out.transaction.cleanup.interval.ms", 500, on_kafka=True
    )
    #: The longest transaction.timeout.ms a producer may ask for (Kafka's default).
    transaction_max_timeout_ms: int = setting("transaction.max.timeout.ms", 900_000)
    #: KIP-848 consumer groups: Kafka's 5 s heartbeats and 45 s sessions made short on
    #: both backends (with the matching minimums, `KAFKA_ONLY`) so groups settle fast.
    group_consumer_heartbeat_interval_ms: int = setting(
        "group.consumer.heartbeat.interval.ms", 500, on_kafka=True
    )
    group_consumer_session_timeout_ms: int = setting(
        "group.consumer.session.timeout.ms", 10000, on_kafka=True
    )
    #: Kafka's default 3000: how long a new classic group waits for more members before
    #: its first generation, extended by each new member up to the rebalance timeout.
    #: 0 on both backends: they form groups alike.
    group_initial_rebalance_delay_ms: int = setting(
        "group.initial.rebalance.delay.ms", 0, on_kafka=True
    )
    #: Kafka's default is 50; 1 on both backends (one node, quick start), and
    #: __consumer_offsets gets this many partitions.
    offsets_topic_num_partitions: int = setting(
        "offsets.topic.num.partitions", 1, on_kafka=True, settable=False
    )
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
    #: The emulator's value (its field's default); None without a field.
    default: object = None


#: What only the `kafka` backend is started with: what one node needs, and the minimums
#: that let the short group timeouts above be asked for (the emulator behaves so already).
KAFKA_ONLY: tuple[Setting, ...] = (
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


def as_kafka_text(value: object) -> str:
    """A `BrokerSettings` value as Kafka writes it (``true``, ``500``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _row(declared: dataclasses.Field[Any]) -> Setting:
    name, on_kafka, settable = declared.metadata["kafka"]
    value = as_kafka_text(declared.default) if on_kafka else None
    return Setting(name, declared.name, value, settable, declared.default)


#: Every broker setting kafkatest knows: the `BrokerSettings` fields, then `KAFKA_ONLY`.
SETTINGS: tuple[Setting, ...] = (
    *(_row(f) for f in dataclasses.fields(BrokerSettings) if "kafka" in f.metadata),
    *KAFKA_ONLY,
)

#: The settings with a `BrokerSettings` field, by Kafka name.
FIELDS: dict[str, str] = {s.name: s.field for s in SETTINGS if s.field is not None}
#: What the `kafka` backend starts with (Kafka's name -> value).
KAFKA_BACKEND: dict[str, str] = {
    s.name: s.kafka_backend for s in SETTINGS if s.kafka_backend is not None
}


def by_kafka_name(settings: BrokerSettings) -> dict[str, str]:
    """`settings` by Kafka config name (every field of the table), then the topic defaults."""
    return {
        **{name: as_kafka_text(getattr(settings, field)) for name, field in FIELDS.items()},
        **dict(settings.topic_defaults),
    }
