"""Broker configs as DescribeConfigs shows them: Kafka 4.1's full set.

The table is data: ``data/kafka_4_1_broker_configs.json`` holds Kafka 4.1.1's
broker configs at their defaults (every key with its type, synonyms and
documentation), taken from its DescribeConfigs answer. On top come the settings
the broker is started with, shown as STATIC_BROKER_CONFIG as Kafka shows its
server.properties: the ones every KRaft broker needs (ids, listeners, log dir),
the quick-test settings kafkatest gives its `kafka` backend too (so e.g.
``num.partitions`` is a static 1 on both), and the emulator's `BrokerSettings`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from kafkatest.emulator.state.cluster import Cluster

if TYPE_CHECKING:
    from kafkatest.emulator.state.broker_state import BrokerSettings

#: DescribeConfigs config sources.
DYNAMIC_DEFAULT_BROKER_CONFIG = 3
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5

#: Where the emulator says its (in-memory) logs live; DescribeLogDirs names it too.
LOG_DIR = "/kafkatest-emulator/data"

Synonym = tuple[str, str | None, int]


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    name: str
    value: str | None
    source: int
    read_only: bool
    sensitive: bool
    #: DescribeConfigs' config type code (1 BOOLEAN ... 9 PASSWORD).
    type: int
    #: Most specific first: the entry's own source, then the default it overrides.
    synonyms: tuple[Synonym, ...]
    documentation: str | None


@cache
def kafka_defaults() -> tuple[BrokerConfig, ...]:
    """Kafka 4.1.1's broker configs, from the data file (read once)."""
    text = (
        resources.files("kafkatest.emulator.state")
        .joinpath("data/kafka_4_1_broker_configs.json")
        .read_text(encoding="utf-8")
    )
    return tuple(
        BrokerConfig(
            name=entry["name"],
            value=entry["value"],
            source=entry["source"],
            read_only=entry["read_only"],
            sensitive=entry["sensitive"],
            type=entry["type"],
            synonyms=tuple((s[0], s[1], s[2]) for s in entry["synonyms"]),
            documentation=entry["documentation"],
        )
        for entry in json.loads(text)["configs"]
    )


def _static(entry: BrokerConfig, value: str) -> BrokerConfig:
    """`entry` as set in the broker's properties to `value` (Kafka lists a setting
    as static even when it equals the default, and never a sensitive value)."""
    shown = None if entry.sensitive else value
    if entry.source == STATIC_BROKER_CONFIG:
        return replace(entry, value=shown, synonyms=((entry.name, shown, STATIC_BROKER_CONFIG),))
    defaults = tuple(s for s in entry.synonyms if s[2] == DEFAULT_CONFIG)
    return replace(
        entry,
        value=shown,
        source=STATIC_BROKER_CONFIG,
        synonyms=((entry.name, shown, STATIC_BROKER_CONFIG), *defaults),
    )


#: Settings that behave in the emulator as these do in Kafka, and that kafkatest also
#: starts its `kafka` backend with (kafka_properties.TEST_SETTINGS; a test on both
#: backends holds the two alike). Those the emulator lets a test change come from
#: BrokerSettings instead.
QUICK_TEST_SETTINGS: dict[str, str] = {
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.min.session.timeout.ms": "10000",
    "log.initial.task.delay.ms": "0",
    "log.segment.delete.delay.ms": "0",
    "file.delete.delay.ms": "0",
}


#: BrokerSettings that kafkatest's `kafka` backend also sets (so they show as static
#: even at Kafka's default); the others show as static only when changed.
SET_LIKE_THE_KAFKA_BACKEND = frozenset(
    {
        "num.partitions",
        "auto.create.topics.enable",
        "delete.topic.enable",
        "offsets.topic.num.partitions",
        "log.retention.check.interval.ms",
        "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        "group.consumer.heartbeat.interval.ms",
        "group.consumer.session.timeout.ms",
        "log.cleaner.backoff.ms",
    }
)


def kafka_settings(s: BrokerSettings) -> dict[str, str]:
    """The BrokerSettings by Kafka config name, as DescribeConfigs shows them."""
    return {
        "auto.create.topics.enable": str(s.auto_create_topics).lower(),
        "num.partitions": str(s.num_partitions),
        "default.replication.factor": str(s.default_replication_factor),
        "message.max.bytes": str(s.message_max_bytes),
        "log.retention.check.interval.ms": str(s.retention_check_interval_ms),
        "delete.topic.enable": str(s.delete_topic_enable).lower(),
        "offsets.topic.num.partitions": str(s.offsets_topic_num_partitions),
        "transaction.abort.timed.out.transaction.cleanup.interval.ms": str(
            s.transaction_abort_interval_ms
        ),
        "group.consumer.heartbeat.interval.ms": str(s.group_consumer_heartbeat_interval_ms),
        "group.consumer.session.timeout.ms": str(s.group_consumer_session_timeout_ms),
        "group.initial.rebalance.delay.ms": str(s.group_initial_rebalance_delay_ms),
        "log.cleaner.backoff.ms": str(s.log_cleaner_backoff_ms),
    }


def broker_configs(
    cluster: Cluster, broker_id: int, settings: dict[str, str]
) -> list[BrokerConfig]:
    """Every config of broker `broker_id`, as Kafka 4.1 would describe it.

    `settings` are the emulator's BrokerSettings by Kafka name.
    """
    defaults = {entry.name: entry.value for entry in kafka_defaults()}
    changed = {
        name: value
        for name, value in settings.items()
        if name in SET_LIKE_THE_KAFKA_BACKEND or defaults.get(name) != value
    }
    host, port = cluster.address(broker_id)
    controller_host, controller_port = cluster.address(cluster.controller_id)
    listener = f"PLAINTEXT://{host}:{port}"
    started_with = {
        "process.roles": "broker,controller",
        "node.id": str(broker_id),
        "broker.id": str(broker_id),
        "listeners": listener,
        "advertised.listeners": listener,
        "inter.broker.listener.name": "PLAINTEXT",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "controller.quorum.voters": f"{cluster.controller_id}@{controller_host}:{controller_port}",
        "log.dirs": LOG_DIR,
        **QUICK_TEST_SETTINGS,
        **changed,
    }
    return [
        _static(entry, started_with[entry.name]) if entry.name in started_with else entry
        for entry in kafka_defaults()
    ]


def cluster_default_configs() -> list[BrokerConfig]:
    """The cluster-wide dynamic defaults (DescribeConfigs of broker ""): what
    ``kafka-configs --entity-default`` shows."""
    return [
        replace(
            entry,
            synonyms=tuple(s for s in entry.synonyms if s[2] == DYNAMIC_DEFAULT_BROKER_CONFIG),
        )
        for entry in kafka_defaults()
        if entry.source == DYNAMIC_DEFAULT_BROKER_CONFIG
    ]
