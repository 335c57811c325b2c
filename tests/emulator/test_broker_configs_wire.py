"""A broker's configs as Kafka 4.1 describes them, on every backend.

The expected table is Kafka 4.1.1's own (the emulator's data file, checked here
against the `kafka` backend): every key at its default, with its synonyms, type and
documentation, plus the settings kafkatest starts its brokers with, shown as
STATIC_BROKER_CONFIG, and the broker's own listener, id and log dir.
"""

from __future__ import annotations

import re
from typing import Any

from kio.schema.describe_configs.v4.request import (
    DescribeConfigsRequest,
    DescribeConfigsResource,
)
from kio.schema.errors import ErrorCode
from kio.static.primitive import i8
from raw_client import ask

from kafkatest import Broker
from kafkatest.apps.tools import run_kafka_tool
from kafkatest.brokers.kafka_process import TEST_SETTINGS
from kafkatest.emulator.state.broker_configs import (
    DEFAULT_CONFIG,
    STATIC_BROKER_CONFIG,
    kafka_defaults,
)

DESCRIBE_CONFIGS = 32
BROKER = i8(4)
CONFIG_COMMAND = "kafka.admin.ConfigCommand"
#: Settings whose value is the broker's own (ports, paths), checked separately.
PER_BROKER = {"listeners", "log.dirs", "controller.quorum.voters"}


def describe_broker(
    broker: Broker, name: str, keys: tuple[str, ...] | None = None, resource_type: i8 = BROKER
) -> Any:
    """DescribeConfigs v4 of one resource (a broker unless `resource_type` says)."""
    request = DescribeConfigsRequest(
        resources=(
            DescribeConfigsResource(
                resource_type=resource_type, resource_name=name, configuration_keys=keys
            ),
        ),
        include_synonyms=True,
        include_documentation=True,
    )
    [result] = ask(broker.bootstrap_servers, DESCRIBE_CONFIGS, 4, request).results
    return result


def broker_id(broker: Broker) -> str:
    [(node_id, _)] = [(n.id, n) for n in broker.admin().list_topics(timeout=10).brokers.values()]
    return str(node_id)


def expected_table(broker: Broker, node: str) -> dict[str, tuple[Any, ...]]:
    """name -> (value, source, read_only, sensitive, type, synonyms, documentation)."""
    started_with = {
        **TEST_SETTINGS,
        "process.roles": "broker,controller",
        "node.id": node,
        "broker.id": node,
        "advertised.listeners": f"PLAINTEXT://{broker.bootstrap_servers}",
        "inter.broker.listener.name": "PLAINTEXT",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    }
    table = {}
    for entry in kafka_defaults():
        value, source, synonyms = entry.value, entry.source, entry.synonyms
        if entry.name in started_with:
            value = None if entry.sensitive else started_with[entry.name]
            source = STATIC_BROKER_CONFIG
            synonyms = (
                (entry.name, value, STATIC_BROKER_CONFIG),
                *(s for s in entry.synonyms if s[2] == DEFAULT_CONFIG),
            )
        table[entry.name] = (
            value,
            source,
            entry.read_only,
            entry.sensitive,
            entry.type,
            synonyms,
            entry.documentation,
        )
    return table


def test_broker_configs_are_kafka_41s_with_sources_synonyms_and_documentation(
    kafka_broker: Broker,
) -> None:
    node = broker_id(kafka_broker)
    result = describe_broker(kafka_broker, node)
    assert result.error_code == ErrorCode.none
    got = {
        c.name: (
            c.value,
            c.config_source,
            c.read_only,
            c.is_sensitive,
            c.config_type,
            tuple((s.name, s.value, s.source) for s in c.synonyms),
            c.documentation,
        )
        for c in result.configs
    }
    expected = expected_table(kafka_broker, node)
    assert len(got) > 300 and set(got) == set(expected)
    assert {k: v for k, v in got.items() if k not in PER_BROKER} == {
        k: v for k, v in expected.items() if k not in PER_BROKER
    }
    # The broker's own listener comes first in `listeners` (Kafka's also lists its
    # controller listener), its log dir is a path, the quorum voter is this node.
    assert got["listeners"][0].startswith(f"PLAINTEXT://{kafka_broker.bootstrap_servers}")
    assert got["listeners"][1] == STATIC_BROKER_CONFIG
    assert got["log.dirs"][0].startswith("/")
    assert got["controller.quorum.voters"][0].startswith(f"{node}@127.0.0.1:")


def test_broker_configs_by_key_for_the_cluster_default_and_for_a_wrong_broker(
    kafka_broker: Broker,
) -> None:
    node = broker_id(kafka_broker)
    some = describe_broker(kafka_broker, node, ("num.partitions", "no.such.config"))
    assert [(c.name, c.value, c.config_source) for c in some.configs] == [
        ("num.partitions", "1", STATIC_BROKER_CONFIG)
    ]

    cluster_wide = describe_broker(kafka_broker, "")
    assert cluster_wide.error_code == ErrorCode.none
    assert [
        (c.name, c.value, c.config_source, tuple((s.name, s.value, s.source) for s in c.synonyms))
        for c in cluster_wide.configs
    ] == [("min.insync.replicas", "1", 3, (("min.insync.replicas", "1", 3),))]

    wrong = describe_broker(kafka_broker, "999")
    assert (wrong.error_code, wrong.error_message, wrong.configs) == (
        ErrorCode.invalid_request,
        f"Unexpected broker id, expected {node} or empty string, but received 999",
        (),
    )


def test_kafka_configs_describes_all_broker_configs(kafka_broker: Broker) -> None:
    node = broker_id(kafka_broker)
    result = run_kafka_tool(
        CONFIG_COMMAND,
        [
            "--bootstrap-server", kafka_broker.bootstrap_servers,
            "--describe", "--all", "--entity-type", "brokers", "--entity-name", node,
        ],
        timeout_s=90,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    header, *lines = result.stdout.splitlines()
    assert header == f"All configs for broker {node} are:"
    settings = dict(
        re.match(r"^  ([^=]+)=(.*?) sensitive=", line).groups()  # type: ignore[union-attr]
        for line in lines
    )
    assert set(settings) == {entry.name for entry in kafka_defaults()}
    assert settings["advertised.listeners"] == f"PLAINTEXT://{kafka_broker.bootstrap_servers}"
    assert settings["log.retention.hours"] == "168"
    assert (
        "  offsets.topic.num.partitions=1 sensitive=false synonyms="
        "{STATIC_BROKER_CONFIG:offsets.topic.num.partitions=1, "
        "DEFAULT_CONFIG:offsets.topic.num.partitions=50}"
    ) in lines
