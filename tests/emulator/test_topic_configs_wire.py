"""A topic's and a group's configs as Kafka 4.1 describes them, on every backend.

Kafka 4.1.1's answer (captured on the `kafka` backend) is written down below: every
topic config, its value and source, and its synonyms (the topic's own value, then
the broker config that sets its default: what ``kafka-configs --describe --all``
prints as ``synonyms={...}``). The `kafka` backend starts Kafka with
log.segment.delete.delay.ms=100, and its min.insync.replicas is a cluster default,
so those two show broker-level sources.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kio.schema.describe_configs.v4.request import (
    DescribeConfigsRequest,
    DescribeConfigsResource,
)
from kio.schema.errors import ErrorCode
from kio.static.primitive import i8
from raw_client import ask

from kafkatest import Broker
from kafkatest.pytest_plugin import unique_topic_name

sys.path.insert(0, str(Path(__file__).parents[1] / "conformance"))
from test_group_configs import alter

TOPIC, GROUP = i8(2), i8(32)
_MAX = "9223372036854775807"
TOPIC_OVERRIDE, DYNAMIC_DEFAULT, STATIC, DEFAULT, GROUP_CONFIG = 1, 3, 4, 5, 8

#: Kafka 4.1.1, topic with retention.ms=1234 and cleanup.policy=compact:
#: name -> (value, source, synonyms).
KAFKA_41_TOPIC: dict[str, tuple[str, int, list[tuple[str, str, int]]]] = {
    "cleanup.policy": (
        "compact", TOPIC_OVERRIDE,
        [("cleanup.policy", "compact", 1), ("log.cleanup.policy", "delete", 5)],
    ),
    "compression.gzip.level": ("-1", DEFAULT, [("compression.gzip.level", "-1", 5)]),
    "compression.lz4.level": ("9", DEFAULT, [("compression.lz4.level", "9", 5)]),
    "compression.type": ("producer", DEFAULT, [("compression.type", "producer", 5)]),
    "compression.zstd.level": ("3", DEFAULT, [("compression.zstd.level", "3", 5)]),
    "delete.retention.ms": (
        "86400000", DEFAULT, [("log.cleaner.delete.retention.ms", "86400000", 5)]
    ),
    "file.delete.delay.ms": (
        "100", STATIC,
        [("log.segment.delete.delay.ms", "100", 4), ("log.segment.delete.delay.ms", "60000", 5)],
    ),
    "flush.messages": (_MAX, DEFAULT, [("log.flush.interval.messages", _MAX, 5)]),
    "flush.ms": (_MAX, DEFAULT, []),
    "follower.replication.throttled.replicas": ("", DEFAULT, []),
    "index.interval.bytes": ("4096", DEFAULT, [("log.index.interval.bytes", "4096", 5)]),
    "leader.replication.throttled.replicas": ("", DEFAULT, []),
    "local.retention.bytes": ("-2", DEFAULT, [("log.local.retention.bytes", "-2", 5)]),
    "local.retention.ms": ("-2", DEFAULT, [("log.local.retention.ms", "-2", 5)]),
    "max.compaction.lag.ms": (_MAX, DEFAULT, [("log.cleaner.max.compaction.lag.ms", _MAX, 5)]),
    "max.message.bytes": ("1048588", DEFAULT, [("message.max.bytes", "1048588", 5)]),
    "message.timestamp.after.max.ms": (
        "3600000", DEFAULT, [("log.message.timestamp.after.max.ms", "3600000", 5)]
    ),
    "message.timestamp.before.max.ms": (
        _MAX, DEFAULT, [("log.message.timestamp.before.max.ms", _MAX, 5)]
    ),
    "message.timestamp.type": (
        "CreateTime", DEFAULT, [("log.message.timestamp.type", "CreateTime", 5)]
    ),
    "min.cleanable.dirty.ratio": ("0.5", DEFAULT, [("log.cleaner.min.cleanable.ratio", "0.5", 5)]),
    "min.compaction.lag.ms": ("0", DEFAULT, [("log.cleaner.min.compaction.lag.ms", "0", 5)]),
    "min.insync.replicas": (
        "1", DYNAMIC_DEFAULT, [("min.insync.replicas", "1", 3), ("min.insync.replicas", "1", 5)]
    ),
    "preallocate": ("false", DEFAULT, [("log.preallocate", "false", 5)]),
    "remote.log.copy.disable": ("false", DEFAULT, []),
    "remote.log.delete.on.disable": ("false", DEFAULT, []),
    "remote.storage.enable": ("false", DEFAULT, []),
    "retention.bytes": ("-1", DEFAULT, [("log.retention.bytes", "-1", 5)]),
    "retention.ms": ("1234", TOPIC_OVERRIDE, [("retention.ms", "1234", 1)]),
    "segment.bytes": ("1073741824", DEFAULT, [("log.segment.bytes", "1073741824", 5)]),
    "segment.index.bytes": ("10485760", DEFAULT, [("log.index.size.max.bytes", "10485760", 5)]),
    "segment.jitter.ms": ("0", DEFAULT, []),
    "segment.ms": ("604800000", DEFAULT, []),
    "unclean.leader.election.enable": (
        "false", DEFAULT, [("unclean.leader.election.enable", "false", 5)]
    ),
}  # fmt: skip


def describe(broker: Broker, resource_type: i8, name: str) -> Any:
    request = DescribeConfigsRequest(
        resources=(
            DescribeConfigsResource(
                resource_type=resource_type, resource_name=name, configuration_keys=None
            ),
        ),
        include_synonyms=True,
        include_documentation=False,
    )
    [result] = ask(broker.bootstrap_servers, 32, 4, request).results
    assert (result.error_code, result.error_message) == (ErrorCode.none, "")
    return {
        c.name: (c.value, c.config_source, [(s.name, s.value, s.source) for s in c.synonyms])
        for c in result.configs
    }


@pytest.fixture
def configured_topic(kafka_broker: Broker) -> Iterator[str]:
    name = unique_topic_name("described")
    kafka_broker.create_topic(
        name, partitions=1, config={"retention.ms": "1234", "cleanup.policy": "compact"}
    )
    yield name
    kafka_broker.delete_topic(name)


def test_a_topics_configs_sources_and_synonyms_are_kafka_41s(
    kafka_broker: Broker, configured_topic: str
) -> None:
    assert describe(kafka_broker, TOPIC, configured_topic) == KAFKA_41_TOPIC


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("compression.gzip.level", "0", "Value must be between 1 and 9 or equal to -1"),
        ("compression.lz4.level", "18", "Value must be no more than 17"),
        ("compression.zstd.level", "-131073", "Value must be at least -131072"),
        ("local.retention.ms", "-3", "Value must be at least -2"),
        ("message.timestamp.after.max.ms", "-1", "Value must be at least 0"),
        ("segment.index.bytes", "3", "Invalid value 3 for configuration segment.index.bytes: Value must be at least 4"),
        ("flush.messages", "0", "Invalid value 0 for configuration flush.messages: Value must be at least 1"),
        ("flush.ms", "-1", "Invalid value -1 for configuration flush.ms: Value must be at least 0"),
        ("retention.ms", "-2", "Invalid value -2 for configuration retention.ms: Value must be at least -1"),
        ("max.message.bytes", "-1", "Invalid value -1 for configuration max.message.bytes: Value must be at least 0"),
        ("index.interval.bytes", "-1", "Invalid value -1 for configuration index.interval.bytes: Value must be at least 0"),
        ("file.delete.delay.ms", "-1", "Invalid value -1 for configuration file.delete.delay.ms: Value must be at least 0"),
        ("min.insync.replicas", "0", "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"),
        # A double is printed as Java prints it.
        ("min.cleanable.dirty.ratio", "2", "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"),
        (
            "leader.replication.throttled.replicas",
            "bad",
            "leader.replication.throttled.replicas must be the literal '*' or a list of "
            "replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...",
        ),
    ],
)  # fmt: skip
def test_new_topic_configs_are_checked_as_kafka_checks_them(
    kafka_broker: Broker, name: str, value: str, message: str
) -> None:
    from confluent_kafka.admin import NewTopic

    topic = NewTopic(unique_topic_name("checked"), 1, 1, config={name: value})
    future = kafka_broker.admin().create_topics([topic], validate_only=True)[topic.topic]
    with pytest.raises(Exception) as raised:
        future.result(timeout=30)
    error = raised.value.args[0]
    assert error.name() == "INVALID_CONFIG"
    assert message in error.str()


@pytest.mark.parametrize("value", [str(10**30), str(2**63)])
def test_a_long_config_past_a_java_long_is_refused(kafka_broker: Broker, value: str) -> None:
    """Issue 44: the emulator took retention.ms=10^30 (a fault then moved its clock by
    that much); Kafka parses a LONG config with Long.parseLong and refuses it."""
    from confluent_kafka.admin import NewTopic

    topic = NewTopic(unique_topic_name("long"), 1, 1, config={"retention.ms": value})
    future = kafka_broker.admin().create_topics([topic], validate_only=True)[topic.topic]
    with pytest.raises(Exception) as raised:
        future.result(timeout=30)
    error = raised.value.args[0]
    assert error.name() == "INVALID_CONFIG"
    assert f"Invalid value {value} for configuration retention.ms" in error.str()


def test_tiered_storage_cannot_be_switched_on(kafka_broker: Broker) -> None:
    from confluent_kafka.admin import NewTopic

    topic = NewTopic(unique_topic_name("tiered"), 1, 1, config={"remote.storage.enable": "true"})
    future = kafka_broker.admin().create_topics([topic], validate_only=True)[topic.topic]
    with pytest.raises(Exception) as raised:
        future.result(timeout=30)
    assert raised.value.args[0].str() == (
        "Tiered Storage functionality is disabled in the broker. "
        "Topic cannot be configured with remote log storage."
    )


#: Group configs with no broker setting behind them: their default is their own.
OWN_DEFAULTS = {
    "share.auto.offset.reset",
    "share.isolation.level",
    "share.renew.acknowledge.enable",
}


def test_a_groups_configs_list_their_broker_setting_as_a_synonym(kafka_broker: Broker) -> None:
    """kafka-configs --describe --all of a group (Kafka 4.3): each config shows the broker
    setting it defaults to, with that setting's synonyms and source (static where
    kafkatest sets it); a value set on the group comes first, with source GROUP_CONFIG."""
    group = unique_topic_name("group-configs")
    described = describe(kafka_broker, GROUP, group)
    assert described["streams.num.standby.replicas"] == (
        "0",
        DEFAULT,
        [("group.streams.num.standby.replicas", "0", DEFAULT)],
    )
    assert described["consumer.heartbeat.interval.ms"] == (
        "500",
        STATIC,
        [
            ("group.consumer.heartbeat.interval.ms", "500", STATIC),
            ("group.consumer.heartbeat.interval.ms", "5000", DEFAULT),
        ],
    )
    for name, (value, source, synonyms) in described.items():
        setting = name if name in OWN_DEFAULTS else f"group.{name}"
        assert synonyms[0] == (setting, value, source), name
    alter(kafka_broker, group, "streams.num.standby.replicas", "1")
    altered = describe(kafka_broker, GROUP, group)["streams.num.standby.replicas"]
    assert altered == (
        "1",
        GROUP_CONFIG,
        [
            ("streams.num.standby.replicas", "1", GROUP_CONFIG),
            ("group.streams.num.standby.replicas", "0", DEFAULT),
        ],
    )
    alter(kafka_broker, group, "streams.num.standby.replicas", None, delete=True)


def test_min_insync_replicas_above_the_replica_count_does_not_refuse_acks_all(
    kafka_broker: Broker, kafka_topic: Any
) -> None:
    """Kafka 4 caps min.insync.replicas at the partition's replicas (`effectiveMinIsr`):
    a topic of one replica takes acks=all produces whatever the setting."""
    from confluent_kafka import Producer

    topic = kafka_topic(config={"min.insync.replicas": "2"})
    outcome: list[object] = []
    producer = Producer(
        {"bootstrap.servers": kafka_broker.bootstrap_servers, "acks": "all", "retries": 0}
    )
    producer.produce(topic, b"x", on_delivery=lambda error, _message: outcome.append(error))
    producer.flush(15)
    assert outcome == [None]
    assert kafka_broker.latest_offsets(topic) == {0: 1}
