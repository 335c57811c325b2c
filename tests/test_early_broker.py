"""The broker starts beside Spark: `BackgroundStart`, and the plugin's use of it."""

from __future__ import annotations

import threading

import pytest

from kafkatest._ground.background_start import BackgroundStart

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_the_start_runs_on_its_own_thread_and_is_taken_once() -> None:
    release = threading.Event()
    started_on: list[str] = []

    def start() -> str:
        started_on.append(threading.current_thread().name)
        release.wait(10)
        return "broker"

    early = BackgroundStart(start, name="test-start")
    release.set()
    assert early.take() == "broker"
    assert early.take() is None  # the first taker owns it
    assert started_on == ["test-start"]


def test_a_failed_start_raises_in_the_taker() -> None:
    def start() -> str:
        raise OSError("address already in use")

    early = BackgroundStart(start, name="test-start")
    with pytest.raises(OSError, match="address already in use"):
        early.take()
    assert early.take() is None


def test_a_start_nobody_took_is_released_and_a_taken_one_is_not() -> None:
    released: list[str] = []
    untaken = BackgroundStart(lambda: "one", name="test-start")
    untaken.discard(released.append)
    assert released == ["one"]
    assert untaken.take() is None  # discarded: nothing left to take

    taken = BackgroundStart(lambda: "two", name="test-start")
    assert taken.take() == "two"
    taken.discard(released.append)
    assert released == ["one"]


#: A stand-in for Spark's session: it records whether the broker was already being
#: started when it ran (the plugin's early start), then takes a moment as Spark does.
_CONFTEST = """
import time
import pytest
from kafkatest.plugin import brokers as pytest_plugin

seen = {}

@pytest.fixture(scope="session")
def spark_session(request):
    seen["early"] = request.config.stash.get(pytest_plugin._EARLY_BROKER_KEY, None)
    time.sleep(0.2)
    return "spark"

def pytest_unconfigure(config):
    early = seen.get("early")
    if early is not None and early._result is not None:
        # The broker the early start made is closed by the end of the run.
        assert not early._result.running, "the early broker was left running"
        print("EARLY BROKER CLOSED")
"""


def test_a_run_with_spark_and_the_broker_starts_the_broker_beside_spark(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(_CONFTEST)
    pytester.makepyfile(
        """
        from kafkatest import Record
        import conftest

        def test_both(spark_session, kafka_broker, kafka_topic):
            early = conftest.seen["early"]
            assert early is not None, "no early start"
            assert early._result is kafka_broker  # the fixture handed out that broker
            topic = kafka_topic()
            kafka_broker.produce([Record(topic=topic, value=b"v")])
            assert [r.value for r in kafka_broker.consume(topic)] == [b"v"]
        """
    )
    result = pytester.runpytest_subprocess("--kafka-backend=emulator", "-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*EARLY BROKER CLOSED*"])


def test_an_early_broker_no_test_took_is_closed(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(_CONFTEST)
    pytester.makepyfile(
        """
        import pytest

        def test_spark(spark_session):
            pass

        @pytest.mark.skip(reason="never sets the broker up")
        def test_both(spark_session, kafka_broker):
            pass
        """
    )
    result = pytester.runpytest_subprocess("--kafka-backend=emulator", "-s")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*EARLY BROKER CLOSED*"])


def test_a_run_without_spark_starts_its_broker_as_before(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(_CONFTEST)
    pytester.makepyfile(
        """
        from kafkatest.plugin import brokers as pytest_plugin

        def test_broker(kafka_broker, pytestconfig):
            assert pytest_plugin._EARLY_BROKER_KEY not in pytestconfig.stash
        """
    )
    result = pytester.runpytest_subprocess("--kafka-backend=emulator")
    result.assert_outcomes(passed=1)


def test_the_session_broker_comes_with_its_producer_made(pytester: pytest.Pytester) -> None:
    """librdkafka's idempotent producer waits 500 ms for its producer id when it is
    made before any connection is up: the fixture makes it at the broker's start, so
    a test's first seeding does not wait."""
    pytester.makepyfile(
        """
        def test_broker(kafka_broker):
            assert kafka_broker._producer is not None
        """
    )
    result = pytester.runpytest_subprocess("--kafka-backend=emulator")
    result.assert_outcomes(passed=1)


def test_a_conftest_s_own_broker_fixture_gets_no_early_broker(pytester: pytest.Pytester) -> None:
    """A suite that defines its own `kafka_broker` would never take the early one."""
    pytester.makeconftest(
        _CONFTEST
        + """
@pytest.fixture(scope="session")
def kafka_broker():
    return "the suite's own broker"
"""
    )
    pytester.makepyfile(
        """
        import conftest

        def test_both(spark_session, kafka_broker):
            assert kafka_broker == "the suite's own broker"
            assert conftest.seen["early"] is None
        """
    )
    result = pytester.runpytest_subprocess("--kafka-backend=emulator")
    result.assert_outcomes(passed=1)
