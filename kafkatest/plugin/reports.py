"""What a failing test's report carries: the delivery report, Spark's log, the
broker's side of the story."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from kafkatest.plugin.brokers import _BROKERS_KEY, TEST_TOPICS_KEY
from kafkatest.plugin.options import kafkatest_config, xdist_worker

#: Where each broker's log stood when a test's setup ended (by broker), so that a
#: failed test keeps the part of the log written while it ran.
_LOG_START_KEY = pytest.StashKey[dict[int, int]]()


def _report_dir(item: pytest.Item) -> Path:
    """This test's folder under the reports directory (``--kafkatest-reports``)."""
    root = Path(kafkatest_config(item.config).reports or "kafkatest-reports")
    # Relative to where pytest was invoked (the xdist controller's directory), and
    # named by worker too: `--dist each` runs one test id on every worker.
    if not root.is_absolute() and Path.cwd() != item.config.invocation_params.dir:
        root = item.config.invocation_params.dir / root
    worker = xdist_worker(item.config)
    name = item.nodeid + (f"@{worker}" if worker else "")
    return root / re.sub(r"[^A-Za-z0-9._@-]+", "_", name)


def _note_log_starts(item: pytest.Item) -> None:
    item.stash[_LOG_START_KEY] = {
        id(broker): broker.broker_log_size()
        for broker in item.config.stash.get(_BROKERS_KEY, [])
        if hasattr(broker, "broker_log_size")
    }


def _keep_broker_log(item: pytest.Item, broker: Any) -> Path | None:
    """Copy what the broker logged while the test ran into the test's report folder:
    the session's log is in a temporary folder removed when the session ends."""
    if not hasattr(broker, "broker_log_text"):
        return None
    since = item.stash.get(_LOG_START_KEY, {}).get(id(broker), 0)
    if broker.broker_log_size() < since:  # a new log since (a restarted workdir)
        since = 0
    text = broker.broker_log_text(since)
    if not text:
        return None
    directory = _report_dir(item)
    directory.mkdir(parents=True, exist_ok=True)
    kept = directory / f"{broker.backend}-broker.log"
    kept.write_text(text)
    return kept


def _save_delivery_report(
    item: pytest.Item,
    error: BaseException,
    report: pytest.TestReport,
    requests: list[dict[str, Any]] | None = None,
) -> None:
    """A failed delivery assertion or oracle leaves its JSON and HTML report for the user
    to open."""
    from kafkatest.assertions import DeliveryAssertionError
    from kafkatest.oracles.report import OracleAssertionError

    if not isinstance(error, (DeliveryAssertionError, OracleAssertionError)):
        return
    directory = _report_dir(item)
    if requests and isinstance(error, DeliveryAssertionError):
        error.report.requests = requests
    with contextlib.suppress(OSError):
        paths = error.report.write(directory)
        listing = "\n".join(f"  {kind}: {path}" for kind, path in paths.items())
        what = "delivery" if isinstance(error, DeliveryAssertionError) else "oracle"
        report.sections.append((f"kafkatest {what} report", listing))


_FAILURES_SEEN = pytest.StashKey[int]()


def _quiet_expected_failures(item: pytest.Item, report: pytest.TestReport) -> None:
    """A passing test that asserted a query's failure (`assert_query_failed`) shows none
    of Spark's ERROR lines about it: they are what the test expected, and they stay in
    Spark's log file. A failing test keeps them all."""
    import sys

    if "kafkatest.spark.logs" not in sys.modules:  # no Spark in this run
        return
    from kafkatest.spark.logs import expected_failures, without_spark_errors

    if report.when == "setup":
        item.stash[_FAILURES_SEEN] = expected_failures()
        return
    if report.when != "call" or not report.passed or _FAILURES_SEEN not in item.stash:
        return

    if expected_failures() == item.stash[_FAILURES_SEEN]:
        return
    report.sections = [
        (title, without_spark_errors(text) if title.startswith("Captured stderr") else text)
        for title, text in report.sections
    ]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """On failure, attach the broker's log tail: the broker's side of the story."""
    report: pytest.TestReport = yield
    _quiet_expected_failures(item, report)
    uses_broker = "kafka_broker" in getattr(item, "fixturenames", ())
    if uses_broker and report.when == "setup" and report.passed:
        with contextlib.suppress(Exception):
            _note_log_starts(item)
    requests = None
    if report.failed and report.when == "call":
        from kafkatest.plugin.request_report import failed_test_requests

        with contextlib.suppress(Exception):
            requests = failed_test_requests(item)
        if requests is not None:
            report.sections.append(("kafkatest request log", requests[0]))
    if report.failed and call.excinfo is not None:
        _save_delivery_report(item, call.excinfo.value, report, requests and requests[1])
    if report.failed and "spark" in getattr(item, "fixturenames", ()):
        from kafkatest.spark.logs import spark_log_file

        log_file = spark_log_file()
        if log_file is not None:
            report.sections.append(("kafkatest spark log", f"Spark's full log: {log_file}"))
    if report.failed and uses_broker:
        # Only a test that used the broker: another's failure is not the broker's story.
        topics = item.stash.get(TEST_TOPICS_KEY, [])
        for broker in item.config.stash.get(_BROKERS_KEY, []):
            with contextlib.suppress(Exception):
                text = broker.diagnostics(topics)
                kept = _keep_broker_log(item, broker)
                if kept is not None:
                    text += f"\nwhat it logged during this test, kept: {kept}"
                if text:
                    report.sections.append((f"kafkatest {broker.backend} broker", text))
    return report
