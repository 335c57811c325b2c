"""What a failed test's report says about the broker: only for a test that used it,
and for Kafka the log's path with its warnings and errors, not a screen of INFO."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkatest.brokers.process import warnings_tail

LOG = """\
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
"""


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
