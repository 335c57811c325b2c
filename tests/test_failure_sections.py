"""What a failed test's report says about the broker: only for a test that used it,
and for Kafka the log's path with its warnings and errors, not a screen of INFO."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kafkatest.brokers.base import Broker
from kafkatest.brokers.process import lines_naming, warnings_tail
from kafkatest.records import Record

LOG = (
    """\
[2026-11-28 01:16:25,639] INFO [Broker id=1] Leader t-0 starts at leader epoch 0 (state.change.logger)
[2026-11-28 01:16:26,000] WARN [Broker id=1] the first warning (kafka.server.X)
[2026-11-28 01:16:27,000] INFO [QuorumController id=1] Replayed TopicRecord (x)
[2026-11-28 01:16:28,000] ERROR [Broker id=1] it broke (kafka.server.Y)
java.lang.IllegalStateException: boom
\tat a.b.C.d(C.java:1)
\tat a.b.C.e(C.java:2)
\tat a.b.C.f(C.java:3)
\tat a.b.C.g(C.java:4)
\tat a.b.C.h(C.java:5)
\tat a.b.C.i(C.java:6)
[2026-11-28 01:16:29,000] INFO Deleted log for partition t-0 (kafka.log.LogManager)
[2026-11-28 01:16:30,000] INFO Created log for partition kt-mine-1-0 in /d (kafka.log.LogManager)
[2026-11-28 01:16:31,000] INFO Created log for partition kt-other-2-0 in /d (kafka.log.LogManager)
[2026-11-28 01:16:32,000] INFO [Broker id=1] Leader kt-mine-1-0 starts at leader epoch 0 """
    + "x" * 500
    + """
"""
)


def test_the_kafka_log_is_cut_to_its_warnings_and_errors(tmp_path: Path) -> None:
    log = tmp_path / "broker.log"
    log.write_text(LOG)
    text = warnings_tail(log)
    assert "the first warning" in text and "it broke" in text and "boom" in text
    assert "INFO" not in text
    assert "C.h(C.java:5)" not in text  # a trace cut to its first frames
    assert warnings_tail(log, lines=1).startswith("[2026-11-28 01:16:28,000] ERROR")
    assert warnings_tail(tmp_path / "missing.log") == ""


def test_only_a_failed_test_that_used_the_broker_gets_its_section(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        def test_without_the_broker(kafka_broker):
            pass

        def test_fails_without_the_broker():
            assert False

        def test_fails_with_the_broker(kafka_broker):
            assert False
        """
    )
    result = pytester.runpytest_inprocess("--kafka-backend=emulator", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=2)
    output = result.stdout.str()
    without = output.split("test_fails_without_the_broker", 1)[1].split("test_fails_with_the", 1)
    assert "kafkatest emulator broker" not in without[0]
    assert "kafkatest emulator broker" in output.split("_ test_fails_with_the_broker _", 1)[1]


def test_the_kafka_log_lines_about_a_tests_topics(tmp_path: Path) -> None:
    log = tmp_path / "broker.log"
    log.write_text(LOG)
    about = lines_naming(log, ["kt-mine-1"]).splitlines()
    assert [line[26:70] for line in about] == [
        "INFO Created log for partition kt-mine-1-0 i",
        "INFO [Broker id=1] Leader kt-mine-1-0 starts",
    ]
    assert len(about[1]) == 400 and about[1].endswith("…")  # a long line is cut
    assert lines_naming(log, ["kt-mine-1"], lines=1) == about[1]
    assert lines_naming(log, []) == "" == lines_naming(tmp_path / "missing.log", ["kt-mine-1"])


def test_the_broker_tells_what_it_did_to_the_tests_topics(
    kafka_broker: Broker, kafka_topic: Callable[..., str]
) -> None:
    """What the report shows when a test that made topics fails: Kafka's log lines
    about them (where a lost record is usually explained), the emulator's offsets."""
    topic, other = kafka_topic(partitions=2), kafka_topic()
    kafka_broker.produce([Record(topic=topic, value=b"v", partition=1)])
    text = kafka_broker.diagnostics([topic])
    if kafka_broker.backend == "kafka":
        # The broker-wide warnings come first and may name any topic (a metadata
        # request racing a creation logs one); the section about these topics follows.
        text = text.partition("--- its last lines about this test's topics ---\n")[2]
        assert f"Created log for partition {topic}-1 " in text
    else:
        assert f"{topic}-1: log start 0, high watermark 1, log end 1" in text
        assert f"{topic}-0: log start 0, high watermark 0, log end 0" in text
    assert topic in text and other not in text


def test_a_failed_tests_report_names_its_topics(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_fails_with_a_topic(kafka_topic):
            kafka_topic(partitions=2, name="kt-reported")
            assert False
        """
    )
    result = pytester.runpytest_inprocess("--kafka-backend=emulator", "-p", "no:randomly")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*kafkatest emulator broker*",
            "emulator at 127.0.0.1:*; this test's topics:",
            "kt-reported-0: log start 0, high watermark 0, log end 0",
            "kt-reported-1: log start 0, high watermark 0, log end 0",
        ]
    )


def test_a_failed_test_keeps_what_kafka_logged_while_it_ran(pytester: pytest.Pytester) -> None:
    """The session's broker log is removed with the session: the part written during a
    failed test is copied into its report folder, and the report names the copy."""
    pytester.makepyfile(
        """
        def test_passes_first(kafka_topic):
            kafka_topic(name="kt-earlier")

        def test_fails_with_a_topic(kafka_topic):
            kafka_topic(partitions=2, name="kt-mine")
            assert False
        """
    )
    result = pytester.runpytest_inprocess("--kafka-backend=kafka", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["what it logged during this test, kept: *kafka-broker.log"])
    [kept] = (pytester.path / "kafkatest-reports").glob("*test_fails_with_a_topic/kafka-broker.log")
    text = kept.read_text()
    assert "Created log for partition kt-mine-1 " in text
    # What the earlier test did is not this test's story (Kafka deletes that test's
    # topic's files a moment after its teardown, which may fall in this test).
    assert "Created log for partition kt-earlier-0 " not in text
