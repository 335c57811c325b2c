"""The request log in a failed test's report: "what the job asked the broker".

A test whose emulated broker logs requests (it called ``kafka_broker.record_requests()``,
or it is marked ``kafka_requests`` so the log runs for it alone) gets, when it fails, a
report section with one line per API and client (count, versions, error codes, Fetch's
isolation level), and a failed delivery assertion's HTML report draws them as a
timeline. A session broker outlives its tests, so only the requests made during the
test are shown: a mark is taken when its call starts.

Backends that cannot log requests (``kafka``) record nothing: the marker asks for a
diagnostic, not for a feature the test relies on, so it does not fail the test there
(the section says why it is empty).
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator
from typing import Any

import pytest

from kafkatest.brokers.capabilities import Capability

MARKER = "kafka_requests"
#: How many requests a report's timeline draws (the latest): the report stays small.
TIMELINE_LIMIT = 2000

#: (the log at the start of the call, its `recorded` then, whether the marker started it)
_MARK = pytest.StashKey[tuple[Any, int, bool]]()


def _broker(item: pytest.Item) -> Any:
    funcargs = getattr(item, "funcargs", {})
    return funcargs.get("kafka_broker") if "kafka_broker" in funcargs else None


def start_call(item: pytest.Item) -> None:
    """Before the test's body: start the log for a marked test, take the mark."""
    broker = _broker(item)
    if broker is None or not broker.can(Capability.REQUEST_HOOKS):
        return
    started = False
    if item.get_closest_marker(MARKER) is not None:
        broker.record_requests()
        started = True
    log = broker.request_log
    item.stash[_MARK] = (log, broker.call(lambda: log.recorded) if log else 0, started)


def end_test(item: pytest.Item) -> None:
    """At teardown: a log the marker started ends with its test, and so does a
    round-trip time (`rtt_ms`) the test set on the session's broker."""
    mark = item.stash.get(_MARK, None)
    broker = _broker(item)
    control: Any = getattr(broker, "faults", None)
    if hasattr(control, "set_rtt"):
        with contextlib.suppress(Exception):
            control.set_rtt(0)
    if mark is not None:
        del item.stash[_MARK]  # items live as long as the session: keep no log alive
    if mark is not None and mark[2] and broker is not None:
        with contextlib.suppress(Exception):
            if broker.request_log is not None:
                broker.stop_recording_requests()


def failed_test_requests(item: pytest.Item) -> tuple[str, list[dict[str, Any]]] | None:
    """The section text and the timeline data for a failed test, or None when its
    broker logged nothing (a test that did not ask stays as before)."""
    from kafkatest.emulator import summary_lines, timeline

    broker = _broker(item)
    if broker is None:
        return None
    if not broker.can(Capability.REQUEST_HOOKS):
        if item.get_closest_marker(MARKER) is None:
            return None
        return (f"the {broker.backend} backend does not log requests (the emulator does)", [])
    log = broker.request_log
    if log is None:
        return None
    mark = item.stash.get(_MARK, None)
    since = mark[1] if mark is not None and mark[0] is log else 0
    entries, dropped = broker.call(lambda: log.since(since))
    if not entries:
        return ("the broker logged no request during the test", [])
    first, last = entries[0].time_ms, entries[-1].time_ms
    head = (
        f"{len(entries) + dropped} requests during the test, over {last - first} ms of "
        "the broker's clock"
    )
    if dropped:
        head += f" ({dropped} oldest dropped: record_requests(limit={log.limit}))"
    text = "\n".join([head + ":", *(f"  {line}" for line in summary_lines(entries))])
    return text, timeline(entries[-TIMELINE_LIMIT:])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    with contextlib.suppress(Exception):
        start_call(item)
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    # Before the fixtures' teardown: the last test's also closes the session broker.
    with contextlib.suppress(Exception):
        end_test(item)
    return (yield)
