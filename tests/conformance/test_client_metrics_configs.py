"""Client metrics subscriptions (KIP-714): `kafka-configs --entity-type client-metrics`
on every backend. Kafka 4.1.1's answers (captured on the `kafka` backend): three
configs with their defaults, source CLIENT_METRICS_CONFIG (7) once set, Kafka's
checks and words, and ListConfigResources listing the subscriptions that have a
config set.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kio.schema.alter_configs.v2 import request as legacy
from kio.schema.describe_configs.v4.request import (
    DescribeConfigsRequest,
    DescribeConfigsResource,
)
from kio.schema.errors import ErrorCode
from kio.schema.incremental_alter_configs.v1 import request as incremental
from kio.schema.list_config_resources.v0.request import ListConfigResourcesRequest as ListV0
from kio.schema.list_config_resources.v1.request import ListConfigResourcesRequest as ListV1
from kio.static.primitive import i8

from kafkatest import Broker

sys.path.insert(0, str(Path(__file__).parents[1] / "emulator"))
from raw_client import ask

CLIENT_METRICS = i8(16)
SET, DELETE, APPEND = 0, 1, 2
DEFAULT, CLIENT_METRICS_CONFIG = 5, 7
INT, LIST = 3, 7
#: name -> (default, type, documentation), as Kafka 4.1.1 describes them.
CONFIGS = {
    "interval.ms": ("300000", INT, "Metrics push interval in milliseconds"),
    "match": ("", LIST, "Client match criteria"),
    "metrics": ("", LIST, "Telemetry metric name prefix list"),
}


def describe(broker: Broker, name: str) -> dict[str, tuple[Any, ...]]:
    request = DescribeConfigsRequest(
        resources=(
            DescribeConfigsResource(
                resource_type=CLIENT_METRICS, resource_name=name, configuration_keys=None
            ),
        ),
        include_synonyms=True,
        include_documentation=True,
    )
    [result] = ask(broker.bootstrap_servers, 32, 4, request).results
    assert (result.error_code, result.error_message) == (ErrorCode.none, "")
    return {
        c.name: (
            c.value,
            c.config_source,
            [(s.name, s.value, s.source) for s in c.synonyms],
            c.config_type,
            c.documentation,
            c.read_only,
            c.is_sensitive,
        )
        for c in result.configs
    }


def alter(
    broker: Broker, name: str, *changes: tuple[str, int, str | None], validate_only: bool = False
) -> tuple[ErrorCode, str | None]:
    configs = tuple(
        incremental.AlterableConfig(name=key, config_operation=i8(op), value=value)
        for key, op, value in changes
    )
    request = incremental.IncrementalAlterConfigsRequest(
        resources=(
            incremental.AlterConfigsResource(
                resource_type=CLIENT_METRICS, resource_name=name, configs=configs
            ),
        ),
        validate_only=validate_only,
    )
    [answer] = ask(broker.bootstrap_servers, 44, 1, request).responses
    return answer.error_code, answer.error_message


def wait_for(broker: Broker, name: str, key: str, value: str) -> dict[str, tuple[Any, ...]]:
    """Kafka applies a committed config change to its cache a moment later."""
    deadline = time.monotonic() + 10
    while (described := describe(broker, name))[key][0] != value:
        assert time.monotonic() < deadline, f"{key}={value} never applied"
        time.sleep(0.05)
    return described


def listed(broker: Broker) -> set[str]:
    answer = ask(broker.bootstrap_servers, 74, 1, ListV1(resource_types=(CLIENT_METRICS,)))
    assert answer.error_code == ErrorCode.none
    return {r.resource_name for r in answer.config_resources}


@pytest.fixture
def subscription(kafka_broker: Broker) -> Iterator[str]:
    """A fresh subscription name, its configs removed however the test ends (other
    tests expect no subscription on the shared broker)."""
    name = f"cm-{uuid.uuid4().hex[:8]}"
    yield name
    alter(kafka_broker, name, *((key, DELETE, None) for key in CONFIGS))


@pytest.mark.kafka_min_version(
    "4.0", "the answers written down here are Kafka 4's; 3.9.1 answers otherwise (nox kafka39)"
)
def test_a_subscription_is_set_described_listed_and_deleted(
    kafka_broker: Broker, subscription: str
) -> None:
    assert describe(kafka_broker, subscription) == {
        key: (default, DEFAULT, [], kind, doc, False, False)
        for key, (default, kind, doc) in CONFIGS.items()
    }

    assert alter(
        kafka_broker,
        subscription,
        ("metrics", SET, "org.apache.kafka.producer."),
        ("interval.ms", SET, "6000"),
        ("match", SET, "client_id=abc,client_software_name=java"),
    ) == (ErrorCode.none, None)

    described = wait_for(kafka_broker, subscription, "interval.ms", "6000")
    assert {key: entry[:3] for key, entry in described.items()} == {
        "interval.ms": ("6000", 7, [("interval.ms", "6000", 7)]),
        "match": (
            "client_id=abc,client_software_name=java",
            7,
            [("match", "client_id=abc,client_software_name=java", 7)],
        ),
        "metrics": (
            "org.apache.kafka.producer.",
            7,
            [("metrics", "org.apache.kafka.producer.", 7)],
        ),
    }
    deadline = time.monotonic() + 10
    while subscription not in listed(kafka_broker):
        assert time.monotonic() < deadline, "the subscription was never listed"
        time.sleep(0.05)
    v0 = ask(kafka_broker.bootstrap_servers, 74, 0, ListV0())
    assert subscription in {r.resource_name for r in v0.config_resources}

    deleted = ((key, DELETE, None) for key in CONFIGS)
    assert alter(kafka_broker, subscription, *deleted) == (ErrorCode.none, None)
    wait_for(kafka_broker, subscription, "interval.ms", "300000")
    deadline = time.monotonic() + 10
    while subscription in listed(kafka_broker):
        assert time.monotonic() < deadline, "the deleted subscription is still listed"
        time.sleep(0.05)


@pytest.mark.kafka_min_version(
    "4.0", "the answers written down here are Kafka 4's; 3.9.1 answers otherwise (nox kafka39)"
)
@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        (
            ("interval.ms", SET, "50"),
            (
                ErrorCode.invalid_request,
                "Invalid value 50 for interval.ms, interval must be between 100 and 3600000 "
                "(1 hour)",
            ),
        ),
        (
            ("interval.ms", SET, "3600001"),
            (
                ErrorCode.invalid_request,
                "Invalid value 3600001 for interval.ms, interval must be between 100 and "
                "3600000 (1 hour)",
            ),
        ),
        (
            ("interval.ms", SET, "abc"),
            (
                ErrorCode.invalid_config,
                "Invalid value abc for configuration interval.ms: Not a number of type INT",
            ),
        ),
        (("match", SET, "bad"), (ErrorCode.invalid_config, "Illegal client matching pattern: bad")),
        (
            ("match", SET, "foo=bar"),
            (ErrorCode.invalid_config, "Illegal client matching pattern: foo=bar"),
        ),
        (
            ("match", SET, "client_id=["),
            (ErrorCode.invalid_config, "Illegal client matching pattern: client_id=["),
        ),
        (
            ("unknown.config", SET, "1"),
            (ErrorCode.invalid_request, "Unknown client metrics configuration: unknown.config"),
        ),
        (
            ("metrics", APPEND, "org.apache.kafka.consumer."),
            (ErrorCode.invalid_config, "Can't APPEND to key metrics because its type is not LIST."),
        ),
        (
            ("metrics", SET, None),
            (ErrorCode.invalid_request, "Null value not supported for : metrics"),
        ),
        (("interval.ms", SET, "100"), (ErrorCode.none, None)),
        (("interval.ms", SET, "3600000"), (ErrorCode.none, None)),
        (("match", SET, ""), (ErrorCode.none, None)),
    ],
)
def test_subscription_configs_are_checked_as_kafka_checks_them(
    kafka_broker: Broker,
    subscription: str,
    change: tuple[str, int, str | None],
    refusal: tuple[ErrorCode, str | None],
) -> None:
    assert alter(kafka_broker, subscription, change, validate_only=True) == refusal


def test_a_subscription_needs_a_name(kafka_broker: Broker) -> None:
    assert alter(kafka_broker, "", ("interval.ms", SET, "6000")) == (
        ErrorCode.invalid_request,
        "Subscription name can't be empty",
    )


@pytest.mark.kafka_min_version(
    "4.0", "the answers written down here are Kafka 4's; 3.9.1 answers otherwise (nox kafka39)"
)
def test_the_legacy_alter_configs_sets_a_subscription(
    kafka_broker: Broker, subscription: str
) -> None:
    request = legacy.AlterConfigsRequest(
        resources=(
            legacy.AlterConfigsResource(
                resource_type=CLIENT_METRICS,
                resource_name=subscription,
                configs=(legacy.AlterableConfig(name="interval.ms", value="7000"),),
            ),
        ),
        validate_only=False,
    )
    [answer] = ask(kafka_broker.bootstrap_servers, 33, 2, request).responses
    assert (answer.error_code, answer.error_message) == (ErrorCode.none, None)
    assert wait_for(kafka_broker, subscription, "interval.ms", "7000")["metrics"][:2] == ("", 5)
