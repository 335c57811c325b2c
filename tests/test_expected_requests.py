"""Schemas of requests a client is about to send, loaded while the emulator idles.

A Spark job's Java client sends API versions nothing else in a run has sent; each
first request used to wait while the emulator loaded its schema (5-15 ms each, eight
of them on the job's path in a streaming test).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fresh_interpreter import output_lines

_IDLE_LOADING = """
import asyncio, sys, threading, time
from kafkatest.emulator import Emulator

def loaded():
    return [name in sys.modules for name in (
        "kio.schema.init_producer_id.v5.request", "kio.schema.init_producer_id.v5.response",
        "kio.schema.produce.v11.response")]

runner = Emulator()
runner.start()
print(loaded())
# Requests keep coming, one each turn of the emulator's loop (so however slow the
# machine, the loader never wakes to a quiet broker): nothing is loaded meanwhile.
started, quiet = threading.Event(), threading.Event()

async def busy():
    started.set()
    while not quiet.is_set():
        runner.server.requests_seen += 1
        await asyncio.sleep(0)

done = asyncio.run_coroutine_threadsafe(busy(), runner._loop)
started.wait(30)
runner.load_schemas_when_idle([(22, 5), (0, 11), (0, 999)])  # 999: no such version
time.sleep(0.5)
while_busy = loaded()
quiet.set()
done.result(30)
print(while_busy)
deadline = time.monotonic() + 10
while not all(loaded()) and time.monotonic() < deadline:
    time.sleep(0.01)
print(loaded())
runner.load_schemas_when_idle([(22, 5)])  # asked before: nothing more to do
runner.close()
"""


def test_the_emulator_loads_expected_schemas_only_while_no_request_comes(
    tmp_path: Path,
) -> None:
    before, while_busy, idle = output_lines(_IDLE_LOADING, tmp_path)
    assert before == "[False, False, False]"
    assert while_busy == "[False, False, False]"
    assert idle == "[True, True, True]"


def test_a_test_with_spark_and_the_emulator_names_the_jobs_requests(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import pyspark
        import pytest

        from kafkatest.brokers.client import READ_BACK_REQUESTS
        from kafkatest.spark.kafka_protocol import connector_requests

        expected = []

        @pytest.fixture(scope="session")
        def spark_session(kafka_broker):
            # this run's stand-in for Spark; the broker records what it is told
            kafka_broker.expect_requests = expected.append
            return object()

        def test_spark_and_broker(spark_session, kafka_broker):
            assert [tuple(pairs) for pairs in expected] == [
                (*connector_requests(pyspark.__version__), *READ_BACK_REQUESTS)
            ]

        def test_broker_alone(kafka_broker):
            assert len(expected) == 1  # no Spark job here: nothing more is named
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
