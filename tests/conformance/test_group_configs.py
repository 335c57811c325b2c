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
from kafkatest.brokers.capabilities import Capability

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
pytestmark = pytest.mark.kafka_min_version(
    "4.0", "group configs (ConfigResource GROUP) and KIP-848 consumer groups are Kafka 4.0's"
)
STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 4, 5
#: Kafka 4.3's seven new group configs and their defaults (kafkatest's
#: group.consumer.assignment.interval.ms is 0 on both backends).
ADDED_IN_4_3 = {
    "consumer.assignment.interval.ms": "0",
    "share.assignment.interval.ms": "1000",
    "share.delivery.count.limit": "5",
    "share.partition.max.record.locks": "2000",
    "share.renew.acknowledge.enable": "true",
    "streams.assignment.interval.ms": "1000",
    "streams.initial.rebalance.delay.ms": "3000",
}
#: From 4.3 a group config inherits its broker setting's source: these three are set in
#: the broker's static configs by kafkatest on both backends.
STATIC_FROM_4_3 = frozenset(
    {
        "consumer.assignment.interval.ms",
        "consumer.heartbeat.interval.ms",
        "consumer.session.timeout.ms",
    }
)


def release_of(broker: Broker) -> tuple[int, ...]:
    """The Kafka release the broker answers as: the emulator's, or the one running."""
    from kafkatest.emulator.release import KAFKA_RELEASE
    from kafkatest.jars.coordinates import kafka_version, release_tuple

    if broker.backend == "emulator":
        return release_tuple(KAFKA_RELEASE)
    return release_tuple(getattr(broker, "version", None) or kafka_version())


def defaults(broker: Broker) -> dict[str, tuple[str, int]]:
    """Every group config at its default, with its source, on this broker's release."""
    if release_of(broker) < (4, 3):
        return {name: (value, DEFAULT_CONFIG) for name, value in DEFAULTS.items()}
    return {
        name: (value, STATIC_BROKER_CONFIG if name in STATIC_FROM_4_3 else DEFAULT_CONFIG)
        for name, value in sorted({**DEFAULTS, **ADDED_IN_4_3}.items())
    }


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
    assert described(kafka_broker, group) == defaults(kafka_broker)


def test_set_and_delete_group_configs(kafka_broker: Broker) -> None:
    group = f"configs-{uuid.uuid4().hex[:8]}"
    alter(kafka_broker, group, "share.auto.offset.reset", "earliest")
    alter(kafka_broker, group, "consumer.session.timeout.ms", "20000")
    now = described(kafka_broker, group)
    assert now["share.auto.offset.reset"] == ("earliest", GROUP_CONFIG_SOURCE)
    assert now["consumer.session.timeout.ms"] == ("20000", GROUP_CONFIG_SOURCE)
    assert now["share.isolation.level"] == ("read_uncommitted", DEFAULT_CONFIG)

    alter(kafka_broker, group, "share.auto.offset.reset", None, delete=True)
    after = described(kafka_broker, group)
    assert after["share.auto.offset.reset"] == ("latest", DEFAULT_CONFIG)
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
    assert described(kafka_broker, group) == defaults(kafka_broker)


def test_list_config_resources_lists_topics_brokers_and_configured_groups(
    kafka_broker: Broker,
) -> None:
    """ListConfigResources v1 (what `kafka-configs --describe` asks first): topics,
    brokers, broker loggers, client metrics and the groups that have configs set;
    an unknown type is answered UNSUPPORTED_VERSION; v0 lists client metrics only."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "emulator"))
    from confluent_kafka import Consumer, TopicPartition
    from kio.schema.errors import ErrorCode
    from kio.schema.list_config_resources.v0.request import ListConfigResourcesRequest as V0
    from kio.schema.list_config_resources.v1.request import ListConfigResourcesRequest as V1
    from kio.static.primitive import i8
    from raw_client import ask

    topic, configured, committed = (f"lcr-{kind}-{uuid.uuid4().hex[:8]}" for kind in "tsc")
    kafka_broker.create_topic(topic, partitions=1)
    consumer = Consumer(
        {"bootstrap.servers": kafka_broker.bootstrap_servers, "group.id": committed}
    )
    consumer.commit(offsets=[TopicPartition(topic, 0, 0)], asynchronous=False)
    consumer.close()
    alter(kafka_broker, configured, "consumer.session.timeout.ms", "46000")

    def listed(*kinds: int) -> tuple[ErrorCode, set[tuple[int, str]]]:
        request = V1(resource_types=tuple(i8(k) for k in kinds))
        answer = ask(kafka_broker.bootstrap_servers, 74, 1, request)
        return answer.error_code, {
            (int(r.resource_type), r.resource_name) for r in answer.config_resources
        }

    brokers = {str(node.id) for node in kafka_broker.admin().describe_cluster().result(30).nodes}
    deadline = time.monotonic() + 15
    while True:  # Kafka's broker lists from its metadata image, a moment behind
        code, everything = listed()
        if {(2, topic), (32, configured)} <= everything or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert code == ErrorCode.none
    assert {(2, topic), (32, configured)} <= everything
    assert (32, committed) not in everything
    assert {name for kind, name in everything if kind in (4, 8)} == brokers
    assert listed(4) == (ErrorCode.none, {(4, b) for b in brokers})
    assert listed(16) == (ErrorCode.none, set())
    code, only_groups = listed(32)
    assert code == ErrorCode.none and (32, configured) in only_groups
    assert {kind for kind, _ in only_groups} == {32}
    for unknown in (0, 1, 3):
        assert listed(unknown) == (ErrorCode.unsupported_version, set())
    v0 = ask(kafka_broker.bootstrap_servers, 74, 0, V0())
    assert (v0.error_code, v0.config_resources) == (ErrorCode.none, ())


def test_a_consumer_groups_configs_set_its_members_intervals(kafka_broker: Broker) -> None:
    """consumer.heartbeat.interval.ms is the interval the coordinator tells the group's
    members; consumer.session.timeout.ms how long it keeps a silent member. Both apply
    from the member's next heartbeat; a group without them uses the broker's."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "emulator"))
    from group_wire import DESCRIBE, new_member, ready_session

    configured, plain = (f"configs-{kind}-{uuid.uuid4().hex[:8]}" for kind in ("set", "plain"))
    topic = f"configs-topic-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(topic, partitions=1)
    alter(kafka_broker, configured, "consumer.heartbeat.interval.ms", "1500")
    alter(kafka_broker, configured, "consumer.session.timeout.ms", "16000")
    sessions = {group: ready_session(kafka_broker, group) for group in (configured, plain)}
    # The emulator's sessions run on its clock, which the test moves instead of waiting.
    clock = kafka_broker.clock if kafka_broker.can(Capability.CLOCK) else None
    if clock is not None:
        clock.freeze()
    try:
        members = {group: new_member() for group in sessions}
        intervals = {
            group: session.heartbeat(
                group, members[group], 0, subscribed_topic_names=(topic,)
            ).heartbeat_interval.total_seconds()
            for group, session in sessions.items()
        }
        assert intervals == {configured: 1.5, plain: 0.5}
        silent_since = time.monotonic()

        def still_members() -> dict[str, bool]:
            return {
                group: bool(
                    session.call(
                        DESCRIBE, 1, group_ids=(group,), include_authorized_operations=False
                    )
                    .groups[0]
                    .members
                )
                for group, session in sessions.items()
            }

        # Neither member heartbeats again: the broker's 10 s session ends the plain
        # group's member, the configured 16 s keeps the other a while longer.
        if clock is not None:
            clock.advance(seconds=9.9)
            assert still_members() == {configured: True, plain: True}
            clock.advance(seconds=0.1)
            assert still_members() == {configured: True, plain: False}
            clock.advance(seconds=5.9)
            assert still_members() == {configured: True, plain: False}
            clock.advance(seconds=0.1)
            assert still_members() == {configured: False, plain: False}
            return
        deadline = silent_since + 13
        while still_members()[plain]:
            assert time.monotonic() < deadline, "the broker's session timeout never ended it"
            time.sleep(0.25)
        assert time.monotonic() - silent_since >= 9.5
        assert still_members() == {configured: True, plain: False}
        deadline = silent_since + 19
        while still_members()[configured]:
            assert time.monotonic() < deadline, "the group's session timeout never ended it"
            time.sleep(0.25)
        assert time.monotonic() - silent_since >= 15.5
    finally:
        if clock is not None:
            clock.resume()
        for session in sessions.values():
            session.close()
