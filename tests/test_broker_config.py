"""One shape for broker settings: Kafka's property names, on every backend."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Producer

from kafkatest import start_broker
from kafkatest.brokers.registry import make_broker
from kafkatest.errors import BrokerError


def _produce_to(broker, topic: str) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "message.timeout.ms": 5000})
    producer.produce(topic, b"x")
    producer.flush(10)


def _wait_for_topic(broker, topic: str, timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if broker.topic_exists(topic):
            return True
        time.sleep(0.2)
    return False


@pytest.mark.kafka_broker_config({"num.partitions": 3})
def test_a_marker_starts_a_broker_with_those_settings(kafka_broker, kafka_topic):
    """num.partitions=3: an auto-created topic gets three partitions, on each backend."""
    topic = f"auto-{time.monotonic_ns()}"
    _produce_to(kafka_broker, topic)
    assert _wait_for_topic(kafka_broker, topic)
    assert kafka_broker.partition_count(topic) == 3
    assert kafka_topic(partitions=1)  # explicit creation still takes the count it is given


@pytest.mark.kafka_broker_config({"auto.create.topics.enable": False})
def test_auto_creation_turned_off_the_same_way_on_every_backend(kafka_broker):
    topic = f"never-{time.monotonic_ns()}"
    _produce_to(kafka_broker, topic)
    assert not _wait_for_topic(kafka_broker, topic, timeout_s=2)


def test_the_session_broker_keeps_kafkas_defaults(kafka_broker):
    topic = f"auto-{time.monotonic_ns()}"
    _produce_to(kafka_broker, topic)
    assert _wait_for_topic(kafka_broker, topic)
    assert kafka_broker.partition_count(topic) == 1


def test_a_setting_the_emulator_does_not_implement_is_refused_by_name():
    with pytest.raises(BrokerError) as refused:
        start_broker("emulator", config={"log.flush.interval.messages": 1})
    text = str(refused.value)
    assert "does not implement broker setting(s) log.flush.interval.messages" in text
    assert "auto.create.topics.enable" in text  # what it does honour
    with pytest.raises(BrokerError, match=r"num.partitions='many': expected a whole number"):
        start_broker("emulator", config={"num.partitions": "many"})


def test_kafkatests_own_wiring_and_external_clusters_are_refused():
    with pytest.raises(BrokerError, match="listeners are kafkatest's to set"):
        make_broker("kafka", config={"listeners": "PLAINTEXT://:9092"})
    with pytest.raises(BrokerError, match="an external cluster's settings are its own"):
        make_broker("external", "127.0.0.1:9", config={"num.partitions": 3})


def test_an_ini_line_applies_to_every_broker_of_the_run(pytester: pytest.Pytester):
    pytester.makeini(
        """
        [pytest]
        kafka_broker_config =
            num.partitions=2
        """
    )
    pytester.makepyfile(
        test_ini="""
        import time
        from confluent_kafka import Producer

        def test_auto_created_topics_have_two_partitions(kafka_broker):
            producer = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers})
            producer.produce("from-ini", b"x")
            producer.flush(10)
            assert kafka_broker.partition_count("from-ini") == 2
        """
    )
    pytester.runpytest_inprocess("--kafka-backend=emulator").assert_outcomes(passed=1)
    pytester.makeini("[pytest]\nkafka_broker_config =\n    num.partitions\n")
    result = pytester.runpytest_inprocess("--kafka-backend=emulator")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*is not name=value*"])


@pytest.mark.parametrize(
    ("release", "formatted_off"),
    [
        ("3.9.1", []),
        ("4.1.2", []),
        ("4.2.0", ["--feature=share.version=0", "--feature=streams.version=0"]),
        ("4.10.0", ["--feature=share.version=0", "--feature=streams.version=0"]),
    ],
)
def test_the_kafka_backend_formats_share_and_streams_groups_off_where_kafka_turns_them_on(
    release: str, formatted_off: list[str]
) -> None:
    """Kafka 4.2 turns both on for a new cluster and older releases do not know
    `streams.version` (their storage tool refuses it); the emulator serves neither, so
    the `kafka` backend formats them off exactly from 4.2 (4.10 compares as a number)."""
    from kafkatest.brokers.kafka_properties import features_off_format_args

    assert features_off_format_args(release) == formatted_off
