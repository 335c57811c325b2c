"""The request log in a failed test's report ("what the job asked for"): a section per
failed test whose emulated broker logged requests (or that is marked
``kafka_requests``), only that test's requests, and a timeline in the delivery report's
HTML. Tests that did not ask get nothing; the marker's log ends with its test."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

PRODUCE = """
from confluent_kafka import Producer

def produce(broker, topic, client_id):
    producer = Producer({**broker.client_config(), "client.id": client_id})
    producer.produce(topic, b"v", partition=0)
    assert producer.flush(30) == 0
"""


def test_a_marked_failed_test_reports_what_it_asked_the_broker(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        helpers=PRODUCE,
        test_marked="""
        import pytest
        from confluent_kafka import Consumer, TopicPartition
        from kafkatest.errors import BrokerError
        from helpers import produce

        @pytest.mark.kafka_requests
        def test_marked_passes(kafka_broker, kafka_topic):
            produce(kafka_broker, kafka_topic(), "quiet-producer")

        def test_the_markers_log_ended_with_its_test(kafka_broker):
            with pytest.raises(BrokerError, match="the request log is off"):
                kafka_broker.requests()

        def test_unmarked_fails(kafka_broker, kafka_topic):
            produce(kafka_broker, kafka_topic(), "unlogged-producer")
            assert False

        @pytest.mark.kafka_requests
        def test_marked_fails(kafka_broker, kafka_topic):
            topic = kafka_topic()
            produce(kafka_broker, topic, "logged-producer")
            consumer = Consumer({**kafka_broker.client_config(), "client.id": "logged-reader",
                                 "group.id": "g", "isolation.level": "read_committed"})
            consumer.assign([TopicPartition(topic, 0, 0)])
            assert consumer.poll(30) is not None
            consumer.close()
            assert False
        """,
    )
    result = pytester.runpytest_inprocess("--kafka-backend=emulator", "-p", "no:randomly")
    result.assert_outcomes(passed=2, failed=2)
    output = result.stdout.str()
    unmarked = output.split("_ test_unmarked_fails _", 1)[1].split("_ test_marked_fails _", 1)
    assert "kafkatest request log" not in unmarked[0]
    marked = unmarked[1]
    section = marked.split("kafkatest request log", 1)[1]
    assert "requests during the test" in section
    assert "Produce from logged-producer (confluent-kafka-python): 1x" in section
    assert "Fetch from logged-reader" in section and "read_committed" in section
    assert "quiet-producer" not in output and "unlogged-producer" not in section


def test_only_the_failed_tests_own_requests_and_a_timeline_in_the_html(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        helpers=PRODUCE,
        test_session="""
        from kafkatest.assertions import assert_exactly_once
        from helpers import produce

        def test_earlier_leaves_the_log_on(kafka_broker, kafka_topic):
            kafka_broker.record_requests()
            produce(kafka_broker, kafka_topic(), "earlier-producer")

        def test_fails_its_delivery(kafka_broker, kafka_topic):
            produce(kafka_broker, kafka_topic(), "later-producer")
            assert_exactly_once([{"id": 1}], [{"id": 1}, {"id": 1}], on="id")
        """,
    )
    result = pytester.runpytest_inprocess(
        "--kafka-backend=emulator", "-p", "no:randomly", "--kafkatest-reports=out"
    )
    result.assert_outcomes(passed=1, failed=1)
    section = result.stdout.str().split("kafkatest request log", 1)[1]
    assert "Produce from later-producer" in section
    assert "earlier-producer" not in section  # the session broker's log, cut at the test
    (html,) = (pytester.path / "out").rglob("delivery-report.html")
    page = html.read_text()
    assert "What the job asked the broker" in page and "later-producer" in page
    assert "earlier-producer" not in page
    data = json.loads(html.with_suffix(".json").read_text())
    assert {item["client_id"] for item in data["requests"]} >= {"later-producer"}


def test_a_backend_without_a_request_log_says_so_for_a_marked_test(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(
        """
        import pytest

        class NoLogBroker:
            backend = "kafka"

            def can(self, capability):
                return False

        @pytest.fixture
        def kafka_broker():
            return NoLogBroker()
        """
    )
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.kafka_requests
        def test_marked_fails(kafka_broker):
            assert False

        def test_unmarked_fails(kafka_broker):
            assert False
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(failed=2)
    output = result.stdout.str()
    marked, unmarked = output.split("_ test_unmarked_fails _", 1)
    assert "the kafka backend does not log requests (the emulator does)" in marked
    assert "kafkatest request log" not in unmarked
