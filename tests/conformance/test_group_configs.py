"""Group configs (ConfigResource GROUP, KIP-848 and share groups) on both backends:
the keys and defaults DescribeConfigs lists, and what IncrementalAlterConfigs
accepts and refuses, in Kafka's words (written down from Kafka 4.1 first)."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from kafkatest import Broker

DEFAULTS = {
    "consumer.heartbeat.interval.ms": "500",  # kafkatest's broker settings on both
    "consumer.session.timeout.ms": "10000",
    "share.auto.offset.reset": "latest",
    "share.heartbeat.interval.ms": "5000",
    "share.isolation.level": "read_uncommitted",
    "share.record.lock.duration.ms": "30000",
    "share.session.timeout.ms": "45000",
    "streams.heartbeat.interval.ms": "5000",
    "streams.num.standby.replicas": "0",
    "streams.session.timeout.ms": "45000",
}
GROUP_CONFIG_SOURCE = 8


def described(broker: Broker, group: str) -> dict[str, tuple[str, int]]:
    resource = ConfigResource(ResourceType.GROUP, group)
    entries = broker.admin().describe_configs([resource])[resource].result(30)
    return {name: (entry.value, entry.source) for name, entry in entries.items()}


def alter(broker: Broker, group: str, name: str, value: str | None, delete: bool = False) -> None:
    """One change, and wait until the broker describes it: Kafka applies a committed
    config change to its cache a moment later, and an incremental change made before
    that is computed from the stale cache (seen here: a delete that undid a set)."""
    operation = AlterConfigOpType.DELETE if delete else AlterConfigOpType.SET
    resource = ConfigResource(
        ResourceType.GROUP,
        group,
        incremental_configs=[ConfigEntry(name, value, incremental_operation=operation)],
    )
    broker.admin().incremental_alter_configs([resource])[resource].result(30)
    deadline = time.monotonic() + 10
    while (described(broker, group)[name][1] == GROUP_CONFIG_SOURCE) == delete:
        assert time.monotonic() < deadline, f"{name} was never applied"
        time.sleep(0.05)


def test_a_group_has_every_group_config_at_its_default(kafka_broker: Broker) -> None:
    group = f"configs-{uuid.uuid4().hex[:8]}"
    assert described(kafka_broker, group) == {name: (v, 5) for name, v in DEFAULTS.items()}


def test_set_and_delete_group_configs(kafka_broker: Broker) -> None:
    group = f"configs-{uuid.uuid4().hex[:8]}"
    alter(kafka_broker, group, "share.auto.offset.reset", "earliest")
    alter(kafka_broker, group, "consumer.session.timeout.ms", "20000")
    now = described(kafka_broker, group)
    assert now["share.auto.offset.reset"] == ("earliest", GROUP_CONFIG_SOURCE)
    assert now["consumer.session.timeout.ms"] == ("20000", GROUP_CONFIG_SOURCE)
    assert now["share.isolation.level"] == ("read_uncommitted", 5)

    alter(kafka_broker, group, "share.auto.offset.reset", None, delete=True)
    after = described(kafka_broker, group)
    assert after["share.auto.offset.reset"] == ("latest", 5)
    assert after["consumer.session.timeout.ms"] == ("20000", GROUP_CONFIG_SOURCE)


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("no.such.config", "1", "Unknown group config name: no.such.config"),
        (
            "share.auto.offset.reset",
            "nope",
            "Invalid value nope for configuration share.auto.offset.reset: Invalid value "
            "`nope` for configuration share.auto.offset.reset. The value must be either "
            "'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.",
        ),
        (
            "consumer.session.timeout.ms",
            "1000",
            "consumer.session.timeout.ms must be greater than or equal to "
            "group.consumer.min.session.timeout.ms",
        ),
    ],
)
def test_bad_group_configs_are_refused(
    kafka_broker: Broker, name: str, value: str, says: str
) -> None:
    group = f"configs-{uuid.uuid4().hex[:8]}"
    with pytest.raises(KafkaException) as refused:
        alter(kafka_broker, group, name, value)
    error = refused.value.args[0]
    assert (error.name(), error.str()) == ("INVALID_CONFIG", says)
    assert all(source == 5 for _value, source in described(kafka_broker, group).values())
