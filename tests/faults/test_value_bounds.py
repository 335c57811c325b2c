"""Values past kafkatest's bounds (`kafkatest.limits`) are refused at every entry point.

Issue 44: `age_out_records(retention_ms=10**30)` was taken by the Python API, the
HTTP control interface and `kafkatest fault`; the emulator's clock moved by 10^30
ms and every produce after it failed (with struct.error tracebacks in the log)
until the broker was restarted. A 30,000-deep JSON body, a number of 4,300 digits
and an offset of 2^63 got 500s with tracebacks from the control interface. Each is
now refused with the field and the bound named, before anything changes, and the
broker goes on serving.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.emulator.state.clock import Clock
from kafkatest.faults import faults_for
from kafkatest.faults.validation import InvalidFault
from kafkatest.limits import MAX_CLOCK_MS, MAX_CLOCK_STEP_MS, MAX_LONG
from kafkatest.records import Record
from kafkatest.scenarios.spec import Scenario, ScenarioError
from tests.faults.test_control import Standalone, standalone  # noqa: F401

HUGE = 10**30


@pytest.fixture(scope="module")
def broker() -> Iterator[EmulatorBroker]:
    started = EmulatorBroker()
    started.start()
    yield started
    started.close()


def _topic(broker: EmulatorBroker, name: str) -> str:
    broker.create_topic(name)
    broker.produce([Record(name, b"before")])
    return name


def test_the_python_api_refuses_a_retention_past_the_clock_s_bound(
    broker: EmulatorBroker, caplog: pytest.LogCaptureFixture
) -> None:
    topic = _topic(broker, "bounds-retention")
    faults = faults_for(broker)
    before = broker.clock.now_ms()
    with pytest.raises(InvalidFault, match=rf"retention_ms {HUGE} is over the limit of "):
        faults.age_out_records(topic, retention_ms=HUGE)
    with pytest.raises(InvalidFault, match=rf"ms {HUGE} is over the limit of {MAX_CLOCK_STEP_MS}"):
        faults.advance_clock(HUGE)
    with pytest.raises(InvalidFault, match=rf"before {MAX_LONG + 1} is over the limit"):
        faults.delete_records(topic, MAX_LONG + 1)
    with pytest.raises(InvalidFault, match=rf"before {MAX_LONG + 1} is over the limit"):
        faults.delete_records(topic, {0: MAX_LONG + 1})
    # Nothing changed: the clock, the topic's retention, and produce still works.
    assert broker.clock.now_ms() - before < 60_000
    assert "retention.ms" not in broker.topic_config_overrides(topic)
    with caplog.at_level(logging.WARNING, logger="kafkatest"):
        broker.produce([Record(topic, b"after")])
    assert broker.latest_offsets(topic) == {0: 2}
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_the_clock_stops_at_the_end_of_year_9999_and_the_broker_still_serves(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    with pytest.raises(ValueError, match="at most"):
        clock.advance(MAX_CLOCK_STEP_MS + 1)
    with pytest.raises(ValueError, match="whole milliseconds"):
        clock.advance(1.5)  # type: ignore[arg-type]

    near_the_end = EmulatorBroker()
    near_the_end.start()
    try:
        near_the_end.create_topic("late", config={"message.timestamp.type": "LogAppendTime"})
        near_the_end.clock.freeze()
        while MAX_CLOCK_MS - near_the_end.clock.now_ms() > MAX_CLOCK_STEP_MS:
            near_the_end.advance_clock(MAX_CLOCK_STEP_MS)
        left = MAX_CLOCK_MS - near_the_end.clock.now_ms()
        with pytest.raises(ValueError, match="end of year 9999"):
            near_the_end.advance_clock(left + 1)
        with caplog.at_level(logging.WARNING, logger="kafkatest"):
            [placed] = near_the_end.produce([Record("late", b"v")])
        assert placed.timestamp_ms == near_the_end.clock.now_ms()
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    finally:
        near_the_end.close()


def _scenario(action: dict[str, object]) -> dict[str, object]:
    return {
        "name": "bounded",
        "job": "kafkatest.scenarios.jobs:copy_stream",
        "topics": {"src": 1, "sink": 1},
        "source": "src",
        "sink": "sink",
        "steps": [{"do": [action]}],
    }


@pytest.mark.parametrize(
    ("action", "says"),
    [
        ({"age_out_records": {"topic": "src", "retention_ms": HUGE}}, "retention_ms"),
        ({"age_out_records": {"topic": "src", "retention_ms": 1e30}}, "a whole number"),
        ({"advance_clock": {"ms": HUGE}}, "over the limit"),
        ({"delete_records": {"topic": "src", "before": 2**63}}, "over the limit"),
        ({"delete_records": {"topic": "src", "before": {0: 2**63}}}, "over the limit"),
    ],
)
def test_a_scenario_file_is_refused_when_loaded(action: dict[str, object], says: str) -> None:
    with pytest.raises(ScenarioError, match=r"steps\[0\]\.do\[0\]") as refused:
        Scenario.from_data(_scenario(action))
    assert says in str(refused.value)


@pytest.mark.parametrize(
    ("path", "body", "says"),
    [
        ("age_out_records", f'{{"topic": "t", "retention_ms": {HUGE}}}', "over the limit"),
        ("advance_clock", "[" * 30_000 + "]" * 30_000, "nests deeper than"),
        ("advance_clock", '{"ms": ' + "9" * 4_400 + "}", "digits"),
        ("delete_records", f'{{"topic": "t", "before": {2**63}}}', "over the limit"),
        ("delete_records", f'{{"topic": "t", "before": {{"0": {2**63}}}}}', "over the limit"),
    ],
)
def test_the_control_interface_answers_400_and_keeps_serving(
    standalone: Standalone,  # noqa: F811
    path: str,
    body: str,
    says: str,
) -> None:
    status, answer = standalone.http("POST", f"/faults/{path}", body.encode())
    assert (status, answer["ok"]) == (400, False), answer
    assert says in answer["error"]
    assert standalone.http("GET", "/faults") == (200, {"ok": True, "result": []})


def test_the_control_interface_refuses_numbers_in_its_headers_and_path(
    standalone: Standalone,  # noqa: F811
) -> None:
    from tests.faults.test_control_http import raw

    digits = "9" * 5_000
    host = standalone.control
    assert raw(host, f"DELETE /faults/{digits} HTTP/1.1\nHost: {host}\n"
               "Content-Type: application/json")[0] == 400  # fmt: skip
    assert raw(host, f"GET /faults HTTP/1.1\nHost: 127.0.0.1:{digits}")[0] == 421
    head = f"POST /faults/list HTTP/1.1\nHost: {host}\nContent-Type: application/json"
    assert raw(host, f"{head}\nContent-Length: {digits}")[0] == 413
    assert standalone.http("GET", "/faults") == (200, {"ok": True, "result": []})


def test_the_command_line_refuses_a_retention_past_the_bound(
    standalone: Standalone,  # noqa: F811
) -> None:
    topic = standalone.topic()
    done = standalone.fault("age_out_records", "--topic", topic, "--retention-ms", str(HUGE))
    assert done.returncode == 2
    assert "retention_ms" in done.stderr and "over the limit" in done.stderr
    assert "Traceback" not in done.stderr
