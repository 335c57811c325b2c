"""`--kafka-security` from a downstream test run: the session broker is secured and
the helpers (seeding, consuming, admin) log in as the harness's own user."""

from __future__ import annotations

import pytest

DOWNSTREAM = """
from confluent_kafka import Consumer, TopicPartition
from kafkatest import Record


def test_secured(kafka_broker):
    config = kafka_broker.client_config("alice")
    assert config["security.protocol"] == "SASL_SSL"
    assert config["sasl.mechanism"] == "SCRAM-SHA-512"
    options = kafka_broker.spark_options("alice")
    assert options["kafka.security.protocol"] == "SASL_SSL"
    assert options["kafka.ssl.truststore.type"] == "PEM"
    kafka_broker.create_topic("secured", partitions=1)
    kafka_broker.produce([Record("secured", b"v", partition=0)])
    assert [r.value for r in kafka_broker.consume("secured")] == [b"v"]
    consumer = Consumer({**config, "group.id": "g", "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition("secured", 0, 0)])
    message = None
    for _ in range(60):
        message = consumer.poll(0.5)
        if message is not None:
            break
    consumer.close()
    assert message is not None and message.value() == b"v"
"""


def test_kafka_security_option_secures_the_session_broker(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(DOWNSTREAM)
    result = pytester.runpytest_subprocess(
        "--kafka-backend=emulator",
        "--kafka-security=SASL_SSL",
        "--kafka-sasl-mechanism=SCRAM-SHA-512",
        "--kafka-user=alice:alice-secret",
    )
    result.assert_outcomes(passed=1)


def test_the_ini_file_can_ask_for_security(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        """
        [pytest]
        kafka_security = SASL_SSL
        kafka_sasl_mechanisms = SCRAM-SHA-512
        kafka_users =
            alice:alice-secret
        """
    )
    pytester.makepyfile(DOWNSTREAM)
    result = pytester.runpytest_subprocess("--kafka-backend=emulator")
    result.assert_outcomes(passed=1)


def test_a_misspelt_protocol_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x(kafka_broker):\n    pass\n")
    result = pytester.runpytest_subprocess("--kafka-security=SASL_TLS")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown security protocol 'SASL_TLS'*SASL_SSL*"])
