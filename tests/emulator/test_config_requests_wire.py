"""The config APIs' answers to requests Kafka refuses before looking at any config,
to resource types beyond topics and brokers, and the broker's log4j loggers
(KIP-412), on every backend. Each answer was recorded on Kafka 4.1.1 first.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
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
from test_broker_configs_wire import broker_id, describe_broker

from kafkatest import Broker

TOPIC, LOGGER, GROUP = 2, 8, 32
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
Change = tuple[str, int, str | None]
Answer = tuple[ErrorCode, str | None]
INVALID_NAME = (
    "Topic name is invalid: 'bad name!' contains one or more characters other than ASCII "
    "alphanumerics, '.', '_' and '-'"
)


def incremental(broker: Broker, *resources: tuple[int, str, list[Change]]) -> list[Answer]:
    request = IncrementalAlterConfigsRequest(
        resources=tuple(
            AlterConfigsResource(
                resource_type=i8(kind),
                resource_name=name,
                configs=tuple(
                    AlterableConfig(name=key, config_operation=i8(op), value=value)
                    for key, op, value in changes
                ),
            )
            for kind, name, changes in resources
        ),
        validate_only=False,
    )
    answer = ask(broker.bootstrap_servers, 44, 1, request)
    return [(r.error_code, r.error_message) for r in answer.responses]


def legacy(broker: Broker, kind: int, name: str, *configs: tuple[str, str | None]) -> Answer:
    request = AlterConfigsRequest(
        resources=(
            LegacyResource(
                resource_type=i8(kind),
                resource_name=name,
                configs=tuple(LegacyConfig(name=key, value=value) for key, value in configs),
            ),
        ),
        validate_only=False,
    )
    [answer] = ask(broker.bootstrap_servers, 33, 2, request).responses
    return answer.error_code, answer.error_message


@pytest.fixture
def topic(kafka_topic: Any) -> str:
    return str(kafka_topic())


def test_refusals_before_any_config_is_looked_at(kafka_broker: Broker, topic: str) -> None:
    group = f"g-{uuid.uuid4().hex[:8]}"
    cases: list[tuple[tuple[int, str, list[Change]], Answer]] = [
        ((TOPIC, topic, [("retention.ms", SET, "1000"), ("retention.ms", SET, "2000")]),
         (ErrorCode.invalid_request, "Error due to duplicate config keys")),
        ((TOPIC, topic, [("retention.ms", SET, None)]),
         (ErrorCode.invalid_request, "Null value not supported for : retention.ms")),
        ((TOPIC, topic, [("retention.ms", 9, "1")]), (ErrorCode.unknown_server_error, None)),
        ((99, "x", [("a", SET, "1")]), (ErrorCode.invalid_request, "Unknown resource type 99")),
        ((TOPIC, "", [("retention.ms", SET, "1000")]),
         (ErrorCode.invalid_request, "Default topic resources are not allowed.")),
        ((TOPIC, "bad name!", [("retention.ms", SET, "1000")]),
         (ErrorCode.invalid_topic_exception, INVALID_NAME)),
        ((TOPIC, f"{topic}-missing", [("retention.ms", SET, "1000")]),
         (ErrorCode.unknown_topic_or_partition, f"The topic '{topic}-missing' does not exist.")),
        ((GROUP, group, [("consumer.session.timeout.ms", SET, None)]),
         (ErrorCode.invalid_request, "Null value not supported for : consumer.session.timeout.ms")),
        ((GROUP, "", [("consumer.session.timeout.ms", SET, "45000")]),
         (ErrorCode.invalid_request, "Default group resources are not allowed.")),
        ((GROUP, group, [("consumer.session.timeout.ms", 9, "45000")]),
         (ErrorCode.unknown_server_error, None)),
    ]  # fmt: skip
    for resource, expected in cases:
        assert incremental(kafka_broker, resource) == [expected], resource
    twice = incremental(
        kafka_broker,
        (TOPIC, topic, [("retention.ms", SET, "1000")]),
        (TOPIC, topic, [("segment.ms", SET, "1000")]),
    )
    assert twice == [(ErrorCode.invalid_request, "Each resource must appear at most once.")] * 2
    assert kafka_broker.topic_config_overrides(topic) == {}


def test_the_legacy_alter_refuses_the_same_way(kafka_broker: Broker, topic: str) -> None:
    assert legacy(kafka_broker, TOPIC, topic, ("retention.ms", "1"), ("retention.ms", "2")) == (
        ErrorCode.invalid_request,
        "Error due to duplicate config keys",
    )
    assert legacy(kafka_broker, TOPIC, topic, ("retention.ms", None)) == (
        ErrorCode.invalid_request,
        "Null value not supported for : retention.ms",
    )
    assert legacy(kafka_broker, 99, "x", ("a", "1")) == (
        ErrorCode.invalid_request,
        "Unknown resource type 99",
    )
    # log4j levels were never the legacy API's (KIP-412 came with the incremental one)
    assert legacy(kafka_broker, LOGGER, broker_id(kafka_broker), ("root", "INFO")) == (
        ErrorCode.invalid_request,
        "Unknown resource type 8",
    )
    assert legacy(kafka_broker, TOPIC, "bad name!", ("retention.ms", "1")) == (
        ErrorCode.invalid_topic_exception,
        INVALID_NAME,
    )


def test_the_legacy_alter_replaces_a_groups_configs(kafka_broker: Broker) -> None:
    group = f"g-{uuid.uuid4().hex[:8]}"
    both = (("consumer.session.timeout.ms", "45000"), ("consumer.heartbeat.interval.ms", "5000"))
    assert legacy(kafka_broker, GROUP, group, *both) == (ErrorCode.none, None)
    assert legacy(kafka_broker, GROUP, group, ("consumer.heartbeat.interval.ms", "6000")) == (
        ErrorCode.none,
        None,
    )
    keys = ("consumer.session.timeout.ms", "consumer.heartbeat.interval.ms")
    shown = {
        c.name: (c.value, c.config_source) for c in described(kafka_broker, GROUP, group, keys)
    }
    assert shown == {
        "consumer.session.timeout.ms": ("10000", 4),  # back to the broker's (static) setting
        "consumer.heartbeat.interval.ms": ("6000", 8),
    }
    assert legacy(kafka_broker, GROUP, group, ("consumer.session.timeout.ms", "abc")) == (
        ErrorCode.invalid_config,
        "Invalid value abc for configuration consumer.session.timeout.ms: Not a number of type INT",
    )
    assert legacy(kafka_broker, GROUP, group, ("nope.key", "1")) == (
        ErrorCode.invalid_config,
        "Unknown group config name: nope.key",
    )


def described(broker: Broker, kind: int, name: str, keys: tuple[str, ...] | None) -> Any:
    result = describe_broker(broker, name, keys, i8(kind))
    assert (result.error_code, result.error_message) == (ErrorCode.none, "")
    return result.configs


def test_describe_answers_for_names_and_types_it_cannot_describe(
    kafka_broker: Broker, topic: str
) -> None:
    def answer(kind: int, name: str) -> Answer:
        result = describe_broker(kafka_broker, name, None, i8(kind))
        assert result.configs == ()
        return result.error_code, result.error_message

    node = broker_id(kafka_broker)
    assert answer(TOPIC, f"{topic}-missing") == (ErrorCode.unknown_topic_or_partition, "")
    assert answer(TOPIC, "bad name!") == (ErrorCode.invalid_topic_exception, INVALID_NAME)
    # a name must be legal to its end (a newline after it is not)
    assert answer(TOPIC, "abc\n") == (
        ErrorCode.invalid_topic_exception,
        "Topic name is invalid: 'abc\n' contains one or more characters other than ASCII "
        "alphanumerics, '.', '_' and '-'",
    )
    assert answer(TOPIC, "") == (
        ErrorCode.invalid_topic_exception,
        "Topic name is invalid: the empty string is not allowed",
    )
    assert answer(99, "x") == (
        ErrorCode.invalid_request,
        "This most likely occurs because of a request being malformed by the client library "
        "or the message was sent to an incompatible broker. See the broker logs for more "
        "details.",
    )
    assert answer(LOGGER, "") == (ErrorCode.invalid_request, "Broker id must not be empty")
    assert answer(LOGGER, "7") == (
        ErrorCode.invalid_request,
        f"Unexpected broker id, expected {node} but received 7",
    )


CLEANER_LOGGER = "kafka.log.LogCleaner"


def test_log_levels_are_described_changed_and_inherited(kafka_broker: Broker) -> None:
    node = broker_id(kafka_broker)

    def level(name: str) -> tuple[Any, ...]:
        [config] = described(kafka_broker, LOGGER, node, (name,))
        return (config.value, config.config_source, config.read_only, config.config_type)

    assert level("root") == ("INFO", 6, False, 0)
    assert level(CLEANER_LOGGER) == ("INFO", 6, False, 0)
    everything = described(kafka_broker, LOGGER, node, None)
    assert len(everything) > 100 and {"root", "kafka", CLEANER_LOGGER} <= {
        c.name for c in everything
    }
    try:
        assert incremental(kafka_broker, (LOGGER, node, [(CLEANER_LOGGER, SET, "ERROR")])) == [
            (ErrorCode.none, None)
        ]
        assert level(CLEANER_LOGGER) == ("ERROR", 6, False, 0)
        assert incremental(kafka_broker, (LOGGER, node, [("kafka", SET, "WARN")])) == [
            (ErrorCode.none, None)
        ]
        assert incremental(kafka_broker, (LOGGER, node, [(CLEANER_LOGGER, DELETE, None)])) == [
            (ErrorCode.none, None)
        ]
        assert level(CLEANER_LOGGER) == ("WARN", 6, False, 0)  # its parent's, `kafka`
    finally:
        incremental(kafka_broker, (LOGGER, node, [("kafka", SET, "INFO")]))
        incremental(kafka_broker, (LOGGER, node, [(CLEANER_LOGGER, DELETE, None)]))
    assert level(CLEANER_LOGGER) == ("INFO", 6, False, 0)


def test_log_level_changes_kafka_refuses(kafka_broker: Broker) -> None:
    node = broker_id(kafka_broker)
    cases: list[tuple[str, list[Change], Answer]] = [
        (node, [("root", SET, "LOUD")], (ErrorCode.invalid_config,
         "Cannot set the log level of root to LOUD as it is not a supported log level. "
         "Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN")),
        (node, [("kafka.server", SET, "DEBUG")],
         (ErrorCode.invalid_config, "Logger kafka.server does not exist!")),
        (node, [("root", DELETE, None)],
         (ErrorCode.invalid_request, "Removing the log level of the root logger is not allowed")),
        (node, [("root", APPEND, "INFO")], (ErrorCode.invalid_request,
         "APPEND operation is not allowed for the BROKER_LOGGER resource")),
        (node, [("root", SUBTRACT, "INFO")], (ErrorCode.invalid_request,
         "SUBTRACT operation is not allowed for the BROKER_LOGGER resource")),
        (node, [("root", 9, "INFO")], (ErrorCode.unknown_server_error, None)),
        (node, [("root", SET, None)],
         (ErrorCode.invalid_request, "Null value not supported for : root")),
        ("abc", [("root", SET, "INFO")],
         (ErrorCode.invalid_request, "Node id must be an integer, but it is: abc")),
        ("", [("root", SET, "INFO")],
         (ErrorCode.invalid_request, "Node id must be an integer, but it is: ")),
        ("7", [("root", SET, "INFO")],
         (ErrorCode.invalid_request, f"Unexpected node id. Expected {node}, but received 7")),
    ]  # fmt: skip
    for name, changes, expected in cases:
        assert incremental(kafka_broker, (LOGGER, name, changes)) == [expected], changes
    [root] = described(kafka_broker, LOGGER, node, ("root",))
    assert root.value == "INFO"
