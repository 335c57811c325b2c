"""The emulated broker's own configs, with Kafka's defaults unless tests need otherwise.

Where kafkatest runs real Kafka with a non-default value to make tests quick, the
emulator's default is that same value, so a test sees the same timing on both
backends; each such field says which setting it mirrors.
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
