"""Broker configs changed while the broker runs (KIP-226), on every backend.

Recorded on Kafka 4.1.1 first (the `kafka` backend): the answers to each change,
how DescribeConfigs shows the levels (per broker, cluster-wide, static, default)
of a broker and of a topic, and that topics without their own value follow the
broker-level one (`message.max.bytes`, `log.retention.ms`).

The tests share one broker of their own per backend (started with
message.max.bytes=2000, the static level) and put its dynamic levels back after
each test. Kafka applies a change a moment after answering it, so each change
waits until the broker describes it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer
from kio.schema.alter_configs.v2.request import (
    AlterableConfig as LegacyConfig,
    AlterConfigsRequest,
    AlterConfigsResource as LegacyResource,
)
from kio.schema.errors import ErrorCode
from kio.schema.incremental_alter_configs.v1.request import (
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
)
from kio.static.primitive import i8
from raw_client import ask
from test_broker_configs_wire import CONFIG_COMMAND, broker_id, describe_broker

from kafkatest import Broker
from kafkatest.apps.tools import run_kafka_tool

pytestmark = pytest.mark.kafka_broker_config({"message.max.bytes": 2000})

BROKER, TOPIC = i8(4), i8(2)
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, DEFAULT = 2, 3, 4, 5
#: What a Kafka 4.1 cluster holds cluster-wide from its start (ELR needs it).
CLUSTER_START = (("min.insync.replicas", "1"),)


def change(
    broker: Broker, name: str, *changes: tuple[str, int, str | None], validate_only: bool = False
) -> tuple[ErrorCode, str | None]:
    request = IncrementalAlterConfigsRequest(
        resources=(
            AlterConfigsResource(
                resource_type=BROKER,
                resource_name=name,
                configs=tuple(
                    AlterableConfig(name=key, config_operation=i8(op), value=value)
                    for key, op, value in changes
                ),
            ),
        ),
        validate_only=validate_only,
    )
    [answer] = ask(broker.bootstrap_servers, 44, 1, request).responses
    return answer.error_code, answer.error_message


def replace(broker: Broker, name: str, *configs: tuple[str, str]) -> tuple[ErrorCode, str | None]:
    """The legacy AlterConfigs: the level's dynamic configs become `configs`."""
    request = AlterConfigsRequest(
        resources=(
            LegacyResource(
                resource_type=BROKER,
                resource_name=name,
                configs=tuple(LegacyConfig(name=key, value=value) for key, value in configs),
            ),
        ),
        validate_only=False,
    )
    [answer] = ask(broker.bootstrap_servers, 33, 2, request).responses
    return answer.error_code, answer.error_message


def described(
    broker: Broker, name: str, keys: tuple[str, ...] | None = None, resource_type: i8 = BROKER
) -> dict[str, tuple[Any, ...]]:
    """name -> (value, source, read_only, sensitive, type, synonyms)."""
    result = describe_broker(broker, name, keys, resource_type)
    assert result.error_code == ErrorCode.none, result.error_message
    return {
        c.name: (
            c.value,
            c.config_source,
            c.read_only,
            c.is_sensitive,
            c.config_type,
            [(s.name, s.value, s.source) for s in c.synonyms],
        )
        for c in result.configs
    }


def wait_for(broker: Broker, name: str, key: str, value: str | None) -> None:
    """Until the level `name` describes `key` as `value` (None: not set there)."""
    deadline = time.monotonic() + 15
    while True:
        shown = described(broker, name, (key,)).get(key)
        level = DYNAMIC_DEFAULT if name == "" else DYNAMIC_BROKER
        now = shown[0] if shown and shown[1] == level else None
        if now == value:
            return
        assert time.monotonic() < deadline, f"{key} at {name!r} is {shown}, never {value}"
        time.sleep(0.1)


@pytest.fixture
def node(kafka_broker: Broker) -> Iterator[str]:
    """The broker's id; its dynamic levels are put back as they were after the test."""
    node = broker_id(kafka_broker)
    yield node
    assert replace(kafka_broker, node) == (ErrorCode.none, None)
    assert replace(kafka_broker, "", *CLUSTER_START) == (ErrorCode.none, None)
    deadline = time.monotonic() + 15
    while set(described(kafka_broker, "")) != {"min.insync.replicas"} or any(
        entry[1] == DYNAMIC_BROKER for entry in described(kafka_broker, node).values()
    ):
        assert time.monotonic() < deadline, "the dynamic levels were never put back"
        time.sleep(0.1)


def produce(broker: Broker, topic: str, size: int, timestamp_ms: int = 0) -> str | None:
    """Kafka's answer to one record of `size` bytes: None, or the error's name."""
    outcome: list[str | None] = []
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "message.max.bytes": 1_000_000,
            "message.timeout.ms": 10_000,
            "retries": 0,
        }
    )
    producer.produce(
        topic,
        b"x" * size,
        timestamp=timestamp_ms,
        on_delivery=lambda error, _message: outcome.append(error.name() if error else None),
    )
    producer.flush(15)
    assert len(outcome) == 1
    return outcome[0]


def test_a_static_message_max_bytes_is_every_topics_limit(
    kafka_broker: Broker, kafka_topic: Any
) -> None:
    topic = kafka_topic()
    assert produce(kafka_broker, topic, 5000) == "MSG_SIZE_TOO_LARGE"
    assert produce(kafka_broker, topic, 500) is None
    assert described(kafka_broker, topic, ("max.message.bytes",), TOPIC) == {
        "max.message.bytes": (
            "2000", STATIC, False, False, 3,
            [("message.max.bytes", "2000", STATIC), ("message.max.bytes", "1048588", DEFAULT)],
        )
    }  # fmt: skip


def test_the_levels_are_described_and_topics_follow_the_most_specific(
    kafka_broker: Broker, kafka_topic: Any, node: str
) -> None:
    topic = kafka_topic()
    assert change(kafka_broker, "", ("message.max.bytes", SET, "3000")) == (ErrorCode.none, None)
    assert change(kafka_broker, node, ("message.max.bytes", SET, "10000")) == (ErrorCode.none, None)
    assert change(kafka_broker, "", ("log.retention.ms", SET, "3600000")) == (ErrorCode.none, None)
    wait_for(kafka_broker, node, "message.max.bytes", "10000")
    wait_for(kafka_broker, "", "log.retention.ms", "3600000")

    every_level = [
        ("message.max.bytes", "10000", DYNAMIC_BROKER),
        ("message.max.bytes", "3000", DYNAMIC_DEFAULT),
        ("message.max.bytes", "2000", STATIC),
        ("message.max.bytes", "1048588", DEFAULT),
    ]
    retention = [
        ("log.retention.ms", "3600000", DYNAMIC_DEFAULT),
        ("log.retention.hours", "168", DEFAULT),
    ]
    assert described(kafka_broker, node, ("message.max.bytes", "log.retention.ms")) == {
        "message.max.bytes": ("10000", DYNAMIC_BROKER, False, False, 3, every_level),
        "log.retention.ms": ("3600000", DYNAMIC_DEFAULT, False, False, 5, retention),
    }
    cluster_wide = described(kafka_broker, "")
    assert cluster_wide["message.max.bytes"] == (
        "3000", DYNAMIC_DEFAULT, False, False, 3, [("message.max.bytes", "3000", DYNAMIC_DEFAULT)]
    )  # fmt: skip
    assert set(cluster_wide) == {"min.insync.replicas", "message.max.bytes", "log.retention.ms"}
    assert described(kafka_broker, topic, ("max.message.bytes", "retention.ms"), TOPIC) == {
        "max.message.bytes": ("10000", DYNAMIC_BROKER, False, False, 3, every_level),
        "retention.ms": ("3600000", DYNAMIC_DEFAULT, False, False, 5, retention),
    }
    assert produce(kafka_broker, topic, 5000) is None
    assert produce(kafka_broker, topic, 20000) == "MSG_SIZE_TOO_LARGE"

    assert change(kafka_broker, node, ("message.max.bytes", DELETE, None)) == (ErrorCode.none, None)
    wait_for(kafka_broker, node, "message.max.bytes", None)
    assert produce(kafka_broker, topic, 5000) == "MSG_SIZE_TOO_LARGE"
    assert produce(kafka_broker, topic, 2500) is None


def test_a_cluster_wide_retention_deletes_from_topics_without_their_own(
    kafka_broker: Broker, kafka_topic: Any, node: str
) -> None:
    follows, keeps = kafka_topic(), kafka_topic(config={"retention.ms": "-1"})
    an_hour_ago = int(time.time() * 1000) - 3_600_000
    for topic in (follows, keeps):
        for _ in range(3):
            assert produce(kafka_broker, topic, 10, timestamp_ms=an_hour_ago) is None
    assert change(kafka_broker, "", ("log.retention.ms", SET, "60000")) == (ErrorCode.none, None)
    deadline = time.monotonic() + 30
    while kafka_broker.earliest_offsets(follows) != {0: 3}:
        assert time.monotonic() < deadline, "the cluster-wide retention never applied"
        time.sleep(0.2)
    assert kafka_broker.earliest_offsets(keeps) == {0: 0}


#: (level, changes) -> Kafka's answer (4.1.1, then 4.3.1); `node` stands for the broker's id.
REFUSALS: list[tuple[str, tuple[tuple[str, int, str | None], ...], ErrorCode, str | None]] = [
    ("", (("num.partitions", SET, "3"),), ErrorCode.invalid_request,
     "Cannot update these configs dynamically: [num.partitions]"),
    ("", (("num.partitions", SET, "3"), ("auto.create.topics.enable", SET, "false")),
     ErrorCode.invalid_request,
     "Cannot update these configs dynamically: [num.partitions, auto.create.topics.enable]"),
    ("", (("listeners", SET, "PLAINTEXT://:1"),), ErrorCode.invalid_request,
     "Cannot update these configs at default cluster level, broker id must be specified: "
     "[listeners]"),
    ("", (("sasl.enabled.mechanisms", SET, "PLAIN"),), ErrorCode.invalid_request,
     "Cannot update these configs at default cluster level, broker id must be specified: "
     "[sasl.enabled.mechanisms]"),
    ("node", (("ssl.keystore.location", SET, "/nope"),), ErrorCode.invalid_request,
     "These security configs can be dynamically updated only per-listener using the "
     "listener prefix: [ssl.keystore.location]"),
    ("7", (("log.retention.ms", SET, "1"),), ErrorCode.invalid_request,
     "Unexpected broker id, expected {node}, but received 7"),
    ("abc", (("log.retention.ms", SET, "1"),), ErrorCode.invalid_request,
     "Node id must be an integer, but it is: abc"),
    ("", (("log.retention.ms", SET, "abc"),), ErrorCode.invalid_request,
     "Invalid value abc for configuration log.retention.ms: Not a number of type LONG"),
    ("", (("log.segment.bytes", SET, "10"),), ErrorCode.invalid_request,
     "Invalid value 10 for configuration log.segment.bytes: Value must be at least 1048576"),
    ("", (("log.cleanup.policy", SET, "nope"),), ErrorCode.invalid_request,
     "Invalid value nope for configuration log.cleanup.policy: String must be one of: "
     "compact, delete"),
    ("", (("compression.type", SET, "brotli"),), ErrorCode.invalid_request,
     "Invalid value brotli for configuration compression.type: String must be one of: "
     "uncompressed, zstd, lz4, snappy, gzip, producer"),
    ("", (("num.io.threads", SET, "0"),), ErrorCode.invalid_request,
     "Invalid value 0 for configuration num.io.threads: Value must be at least 1"),
    ("", (("num.io.threads", SET, "100"),), ErrorCode.invalid_request,
     "Invalid value org.apache.kafka.common.config.ConfigException: Dynamic thread count "
     "update validation failed for num.io.threads=100, value should not be greater than "
     "double the current value 8 for configuration Invalid dynamic configuration"),
    ("", (("log.cleaner.threads", SET, "5"),), ErrorCode.invalid_request,
     "Invalid value org.apache.kafka.common.config.ConfigException: Log cleaner threads "
     "cannot be increased to more than double the current value 1 for configuration "
     "Invalid dynamic configuration"),
    ("", (("producer.id.expiration.ms", SET, "-5"),), ErrorCode.invalid_request,
     "Invalid value -5 for configuration producer.id.expiration.ms: Value must be at least 1"),
    ("", (("log.retention.ms", APPEND, "5"),), ErrorCode.invalid_config,
     "Config value append is not allowed for config key: log.retention.ms"),
    ("", (("my.other", APPEND, "5"),), ErrorCode.invalid_config, "Unknown config name: my.other"),
    ("", (("log.roll.ms", SET, None),), ErrorCode.invalid_request,
     "Null value not supported for : log.roll.ms"),
    ("", (("log.roll.ms", SET, "1000"), ("log.roll.ms", SET, "2000")), ErrorCode.invalid_request,
     "Error due to duplicate config keys"),
    ("", (("min.insync.replicas", DELETE, None),), ErrorCode.invalid_config,
     "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."),
    ("", (("log.index.size.max.bytes", SET, "3"),), ErrorCode.invalid_request,
     "Invalid value 3 for configuration log.index.size.max.bytes: Value must be at least 4"),
    ("", (("log.cleaner.min.cleanable.ratio", SET, "2"),), ErrorCode.invalid_request,
     "Invalid value 2.0 for configuration log.cleaner.min.cleanable.ratio: Value must be no "
     "more than 1"),
    ("", (("log.roll.ms", SET, "0"),), ErrorCode.invalid_request,
     "requirement failed: log.roll.ms must be greater than or equal to 1"),
    ("", (("log.roll.jitter.ms", SET, "-1"),), ErrorCode.invalid_request,
     "requirement failed: log.roll.jitter.ms must be greater than or equal to 0"),
    ("", (("log.cleaner.dedupe.buffer.size", SET, "-1"),), ErrorCode.invalid_request,
     "requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner "
     "thread."),
    ("", (("log.cleaner.io.buffer.size", SET, "-1"),), ErrorCode.invalid_request,
     "Invalid value -1 for configuration log.cleaner.io.buffer.size: Value must be at least 0"),
    ("", (("num.replica.fetchers", SET, "0"),), ErrorCode.invalid_request,
     "Invalid value 0 for configuration num.replica.fetchers: Value must be at least 1"),
    ("", (("remote.log.reader.threads", SET, "0"),), ErrorCode.invalid_request,
     "Invalid value 0 for configuration remote.log.reader.threads: Value must be at least 1"),
    ("", (("transaction.partition.verification.enable", SET, "maybe"),),
     ErrorCode.invalid_request,
     "Invalid value maybe for configuration transaction.partition.verification.enable: "
     "Expected value to be either true or false"),
]  # fmt: skip


def test_broker_values_kafka_takes_though_their_topic_twins_refuse_them(
    kafka_broker: Broker, node: str
) -> None:
    """The broker's log.retention.ms and log.flush.interval.ms have no lower bound."""
    assert change(kafka_broker, "", ("log.retention.ms", SET, "-2")) == (ErrorCode.none, None)
    assert change(kafka_broker, "", ("log.flush.interval.ms", SET, "-1")) == (ErrorCode.none, None)
    wait_for(kafka_broker, "", "log.retention.ms", "-2")
    wait_for(kafka_broker, "", "log.flush.interval.ms", "-1")


@pytest.mark.parametrize(
    ("level", "changes", "error", "message"),
    REFUSALS,
    ids=[f"{i}-{r[1][0][0]}" for i, r in enumerate(REFUSALS)],
)
def test_a_change_kafka_refuses_is_refused_in_its_words_and_changes_nothing(
    kafka_broker: Broker,
    node: str,
    level: str,
    changes: tuple[tuple[str, int, str | None], ...],
    error: ErrorCode,
    message: str | None,
) -> None:
    level = node if level == "node" else level
    expected = message.format(node=node) if message else None
    assert change(kafka_broker, level, *changes) == (error, expected)
    assert set(described(kafka_broker, "")) == {"min.insync.replicas"}


def test_lists_custom_keys_validate_only_and_the_legacy_replace(
    kafka_broker: Broker, node: str
) -> None:
    assert change(kafka_broker, "", ("log.roll.ms", SET, "123456"), validate_only=True) == (
        ErrorCode.none,
        None,
    )
    assert change(kafka_broker, "", ("log.cleanup.policy", APPEND, "compact")) == (
        ErrorCode.none,
        None,
    )
    wait_for(kafka_broker, "", "log.cleanup.policy", "delete,compact")
    assert change(kafka_broker, "", ("log.cleanup.policy", SUBTRACT, "delete")) == (
        ErrorCode.none,
        None,
    )
    wait_for(kafka_broker, "", "log.cleanup.policy", "compact")
    assert change(kafka_broker, "", ("my.custom.key", SET, "1")) == (ErrorCode.none, None)
    assert change(kafka_broker, "", ("num.io.threads", SET, "10")) == (ErrorCode.none, None)
    deadline = time.monotonic() + 15
    while "my.custom.key" not in described(kafka_broker, ""):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    wait_for(kafka_broker, "", "num.io.threads", "10")
    # A key Kafka does not know is kept, and shown as sensitive (its type is unknown).
    assert described(kafka_broker, node, ("my.custom.key", "log.roll.ms")) == {
        "my.custom.key": (None, DYNAMIC_DEFAULT, True, True, 0, [("my.custom.key", None, 3)]),
        "log.roll.ms": (None, DEFAULT, False, False, 5, []),
    }
    # The legacy AlterConfigs replaces a level whole; cluster-wide it must keep
    # min.insync.replicas while ELR is on.
    assert replace(kafka_broker, "", ("log.roll.jitter.ms", "5")) == (
        ErrorCode.invalid_config,
        "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.",
    )
    assert replace(kafka_broker, "", *CLUSTER_START, ("log.roll.jitter.ms", "5")) == (
        ErrorCode.none,
        None,
    )
    wait_for(kafka_broker, "", "log.roll.jitter.ms", "5")
    assert set(described(kafka_broker, "")) == {"min.insync.replicas", "log.roll.jitter.ms"}


def test_kafka_configs_alters_the_cluster_default(kafka_broker: Broker, node: str) -> None:
    """What an operator types: kafka-configs --entity-default --add-config."""
    result = run_kafka_tool(
        CONFIG_COMMAND,
        [
            "--bootstrap-server", kafka_broker.bootstrap_servers, "--alter",
            "--entity-type", "brokers", "--entity-default",
            "--add-config", "log.retention.bytes=1048576000",
        ],
        timeout_s=90,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Completed updating default config for brokers in the cluster." in result.stdout
    wait_for(kafka_broker, "", "log.retention.bytes", "1048576000")
    refused = run_kafka_tool(
        CONFIG_COMMAND,
        [
            "--bootstrap-server", kafka_broker.bootstrap_servers, "--alter",
            "--entity-type", "brokers", "--entity-default",
            "--add-config", "num.partitions=3",
        ],
        timeout_s=90,
    )  # fmt: skip
    assert refused.returncode != 0
    assert "Cannot update these configs dynamically: [num.partitions]" in (
        refused.stdout + refused.stderr
    )
