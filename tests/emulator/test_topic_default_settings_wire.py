"""A broker started with topic defaults (`log.retention.hours`, `log.segment.bytes`,
`min.insync.replicas`): topics without their own value run with them, and
DescribeConfigs shows them as Kafka 4.1.1 does (recorded on the `kafka` backend)."""

from __future__ import annotations

from typing import Any

import pytest
from test_dynamic_broker_configs_wire import DEFAULT, DYNAMIC_DEFAULT, STATIC, TOPIC, described

from kafkatest import Broker, start_broker
from kafkatest.errors import BrokerError

SETTINGS = {"log.retention.hours": 1, "log.segment.bytes": 2097152, "min.insync.replicas": 2}


@pytest.mark.kafka_broker_config(SETTINGS)
def test_topics_run_with_the_brokers_topic_defaults(kafka_broker: Broker, kafka_topic: Any) -> None:
    topic = kafka_topic()
    shown = described(
        kafka_broker, topic, ("retention.ms", "segment.bytes", "min.insync.replicas"), TOPIC
    )
    assert shown == {
        # log.retention.hours sets it, but Kafka lists no synonym: only
        # log.retention.ms's own levels would show.
        "retention.ms": ("3600000", DEFAULT, False, False, 5, []),
        "segment.bytes": (
            "2097152", STATIC, False, False, 3,
            [("log.segment.bytes", "2097152", STATIC), ("log.segment.bytes", "1073741824", DEFAULT)],
        ),
        # A new cluster takes min.insync.replicas cluster-wide from its static setting.
        "min.insync.replicas": (
            "2", DYNAMIC_DEFAULT, False, False, 3,
            [
                ("min.insync.replicas", "2", DYNAMIC_DEFAULT),
                ("min.insync.replicas", "2", STATIC),
                ("min.insync.replicas", "1", DEFAULT),
            ],
        ),
    }  # fmt: skip


def test_a_topic_default_the_emulator_cannot_parse_is_refused_at_start() -> None:
    with pytest.raises(BrokerError) as refused:
        start_broker("emulator", config={"log.retention.hours": "soon"})
    assert str(refused.value) == (
        "broker setting log.retention.hours='soon': Invalid value soon for configuration "
        "log.retention.hours: Not a number of type INT"
    )
    with pytest.raises(BrokerError, match=r"requirement failed: log\.roll\.ms must be greater"):
        start_broker("emulator", config={"log.roll.ms": 0})
