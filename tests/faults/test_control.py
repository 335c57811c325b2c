"""The standalone emulator's fault control, end to end: HTTP, `kafkatest fault`, clients."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from confluent_kafka import KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

from kafkatest.brokers.process import free_port


@dataclass
class Standalone:
    bootstrap: str
    control: str

    def __post_init__(self) -> None:
        # One client kept for the module: a dropped one cancels its pending futures.
        self._admin = AdminClient({"bootstrap.servers": self.bootstrap})

    def admin(self) -> AdminClient:
        return self._admin

    def topic(self, partitions: int = 1) -> str:
        name = f"control-{uuid.uuid4().hex[:8]}"
        futures = self.admin().create_topics([NewTopic(name, partitions, 1)])
        futures[name].result(10)
        return name

    def fault(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "kafkatest.cli", "fault", *args, "--control", self.control],
            capture_output=True,
            text=True,
            timeout=120,
        )

    def http(self, method: str, path: str, body: bytes | None = None) -> tuple[int, Any]:
        request = urllib.request.Request(
            f"http://{self.control}{path}",
            data=body,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())


def _start_two_brokers(attempts: int = 3) -> tuple[subprocess.Popen[str], int, str, str]:
    """A standalone emulator of two brokers (ports P and P+1) and its control port.

    A free port's neighbour may be taken, or taken between the choice and the start
    (by a Kafka JVM of the same run, once): the emulator then refuses to start, saying
    so, and another pair is tried."""
    for _ in range(attempts):
        port = free_port()
        control = next(p for p in iter(free_port, None) if p not in (port, port + 1))
        command = [
            "emulator", "--port", str(port), "--brokers", "2", "--control-port", str(control),
        ]  # fmt: skip
        process = subprocess.Popen(
            [sys.executable, "-m", "kafkatest.cli", *command],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert process.stdout is not None
        bootstrap_line = process.stdout.readline()
        if "bootstrap servers" in bootstrap_line:
            return process, control, bootstrap_line, process.stdout.readline()
        assert process.wait(20) != 0, bootstrap_line  # it said why on stderr
    raise AssertionError(f"the standalone emulator did not start in {attempts} attempts")


@pytest.fixture(scope="module")
def standalone() -> Iterator[Standalone]:
    process, control, bootstrap_line, control_line = _start_two_brokers()
    try:
        assert f"127.0.0.1:{control}" in control_line, control_line
        yield Standalone(bootstrap_line.split()[-1], f"127.0.0.1:{control}")
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _produce(s: Standalone, topic: str, values: list[bytes], **settings: Any) -> list[Any]:
    outcomes: list[Any] = []
    p = Producer({"bootstrap.servers": s.bootstrap, "linger.ms": 0, **settings})
    for value in values:
        p.produce(
            topic, value, partition=0, on_delivery=lambda e, m: outcomes.append((e, m.offset()))
        )
    p.flush(30)
    return outcomes


def _offsets(s: Standalone, topic: str, spec: OffsetSpec) -> int:
    # A fresh client: a cached one may still route to a moved or recreated leader.
    admin = AdminClient({"bootstrap.servers": s.bootstrap})
    futures = admin.list_offsets({TopicPartition(topic, 0): spec})
    return int(futures[TopicPartition(topic, 0)].result(10).offset)


def test_cli_injects_an_error_lists_it_and_clears_it(standalone: Standalone) -> None:
    topic = standalone.topic()
    done = standalone.fault(
        "inject_error",
        "--api",
        "Produce",
        "--error",
        "TOPIC_AUTHORIZATION_FAILED",
        "--topic",
        topic,
    )
    assert done.returncode == 0, done.stderr
    listed = json.loads(standalone.fault("list").stdout)
    assert listed == [
        {"id": json.loads(done.stdout), "kind": "error", "api": "Produce", "times": 1, "hits": 0}
        | {"topic": topic, "error": "TOPIC_AUTHORIZATION_FAILED"}
    ]

    [(err, _)] = _produce(standalone, topic, [b"refused"])
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED

    standalone.fault("add_latency", "--api", "Fetch", "--delay-ms", "10")
    assert standalone.fault("clear").returncode == 0
    assert json.loads(standalone.fault("list").stdout) == []
    assert _produce(standalone, topic, [b"ok"]) == [(None, 0)]


def test_cli_ages_out_and_deletes_records(standalone: Standalone) -> None:
    topic = standalone.topic()
    _produce(standalone, topic, [b"a", b"b", b"c", b"d"])

    assert json.loads(
        standalone.fault("delete_records", "--topic", topic, "--before", "1").stdout
    ) == {"0": 1}
    assert _offsets(standalone, topic, OffsetSpec.earliest()) == 1
    aged = standalone.fault("age_out_records", "--topic", topic)
    assert aged.returncode == 0, aged.stderr
    assert json.loads(aged.stdout) == {"0": 4}
    assert _offsets(standalone, topic, OffsetSpec.earliest()) == 4


def test_http_moves_a_leader_and_recreates_a_topic(standalone: Standalone) -> None:
    topic = standalone.topic()
    before = (
        standalone.admin().list_topics(topic=topic, timeout=10).topics[topic].partitions[0].leader
    )

    status, answer = standalone.http(
        "POST", "/faults/move_leader", json.dumps({"topic": topic}).encode()
    )
    assert status == 200, answer
    assert answer["result"] != before
    assert _produce(standalone, topic, [b"x"]) == [(None, 0)]

    status, answer = standalone.http(
        "POST", "/faults/recreate_topic", json.dumps({"topic": topic, "partitions": 2}).encode()
    )
    assert status == 200, answer
    assert _offsets(standalone, topic, OffsetSpec.latest()) == 0
    assert standalone.http("DELETE", "/faults")[0] == 200


def test_cli_pauses_and_resumes(standalone: Standalone) -> None:
    topic = standalone.topic()
    assert standalone.fault("pause").returncode == 0
    impatient = {"message.timeout.ms": 1500, "request.timeout.ms": 1000}
    [(err, _)] = _produce(standalone, topic, [b"paused"], **impatient)
    assert err is not None and err.code() == KafkaError._MSG_TIMED_OUT

    assert standalone.fault("resume").returncode == 0
    [(err, _)] = _produce(standalone, topic, [b"resumed"], **impatient)
    assert err is None


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "says"),
    [
        ("POST", "/faults/pause", b"{not json", 400, "not JSON"),
        ("POST", "/faults/explode", b"{}", 400, "unknown action 'explode'"),
        (
            "POST",
            "/faults/inject_error",
            b'{"api": "Produce"}',
            400,
            "missing parameter(s) ['error']",
        ),
        (
            "POST",
            "/faults/add_latency",
            b'{"api": "Produce", "delay_ms": "slow"}',
            400,
            "delay_ms must be int",
        ),
        (
            "POST",
            "/faults/add_latency",
            b'{"api": "Nope", "delay_ms": 1}',
            400,
            "unknown Kafka API 'Nope'",
        ),
        (
            "POST",
            "/faults/delete_topic",
            b'{"topic": "never-was", "color": 1}',
            400,
            "unknown parameter(s) ['color']",
        ),
        (
            "POST",
            "/faults/delete_topic",
            b'{"topic": "never-was"}',
            400,
            "delete_topic: topic 'never-was' does not exist",
        ),
        ("POST", "/faults/advance_clock", b'{"ms": -1}', 400, "ms cannot be negative (-1)"),
        (
            "POST",
            "/faults/compact_now",
            b'{"topic": "never-was"}',
            400,
            "compact_now: topic 'never-was' does not exist",
        ),
        (
            "POST",
            "/faults/delete_records",
            b'{"topic": "t", "before": {"0": true}}',
            400,
            "delete_records: before must map partitions to offsets",
        ),
        ("POST", "/faults/compact_now", b'{"topic": "t", "roll": "no"}', 400, "roll must be bool"),
        ("POST", "/faults/pause", b"[1, 2]", 400, "JSON object"),
        ("GET", "/elsewhere", None, 404, "no such path"),
        ("DELETE", "/faults/abc", None, 400, "expected a fault id"),
    ],
)
def test_bad_requests_get_a_4xx_reason_and_the_emulator_keeps_serving(
    standalone: Standalone, method: str, path: str, body: bytes | None, status: int, says: str
) -> None:
    got, answer = standalone.http(method, path, body)

    assert (got, answer["ok"]) == (status, False)
    assert says in answer["error"]
    assert standalone.http("GET", "/faults") == (200, {"ok": True, "result": []})
    assert standalone.admin().list_topics(timeout=10).brokers


def test_cli_reports_a_refusal_with_exit_status_2(standalone: Standalone) -> None:
    done = standalone.fault("add_partitions", "--topic", "whatever")

    assert done.returncode == 2
    assert "missing parameter(s) ['total']" in done.stderr


def test_cli_reports_a_fault_that_cannot_fire_with_the_api_s_message(
    standalone: Standalone,
) -> None:
    topic = standalone.topic(partitions=2)

    clock = standalone.fault("advance_clock", "--ms", "-1")
    records = standalone.fault("delete_records", "--topic", topic, "--before", "0=1,5=1")

    assert clock.returncode == 2
    assert "advance_clock: ms cannot be negative (-1)" in clock.stderr
    assert records.returncode == 2
    assert f"partition(s) [5] do not exist: topic '{topic}' has partitions 0..1" in records.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["delete_records", "--topic", "t", "--before", "x"], "--before: 'x': give an offset"),
        (["delete_records", "--topic", "t", "--before", "0=a"], "PARTITION=OFFSET pairs"),
        (["recreate_topic", "--topic", "t", "--config", "retention"], "--config: 'retention'"),
    ],
)
def test_cli_options_it_cannot_parse_are_a_usage_error(
    standalone: Standalone, args: list[str], says: str
) -> None:
    done = standalone.fault(*args)

    assert done.returncode == 2
    assert says in done.stderr
    assert "Traceback" not in done.stderr


def test_http_removes_one_fault_by_id_and_it_no_longer_fires(standalone: Standalone) -> None:
    topic = standalone.topic()
    params = {"api": "Produce", "error": "TOPIC_AUTHORIZATION_FAILED", "times": 100}
    status, added = standalone.http(
        "POST", "/faults/inject_error", json.dumps({**params, "topic": topic}).encode()
    )
    assert status == 200, added
    status, kept = standalone.http(
        "POST", "/faults/add_latency", b'{"api": "Fetch", "delay_ms": 1, "times": 100}'
    )
    assert status == 200, kept

    assert standalone.http("DELETE", f"/faults/{added['result']}") == (
        200,
        {"ok": True, "result": True},
    )

    listed = standalone.http("GET", "/faults")[1]["result"]
    assert [fault["id"] for fault in listed] == [kept["result"]]
    assert _produce(standalone, topic, [b"no longer refused"]) == [(None, 0)]
    assert standalone.http("DELETE", "/faults")[0] == 200


def test_http_removing_an_unknown_fault_id_is_a_404_with_a_reason(standalone: Standalone) -> None:
    status, added = standalone.http(
        "POST", "/faults/add_latency", b'{"api": "Fetch", "delay_ms": 1, "times": 100}'
    )
    assert standalone.http("DELETE", f"/faults/{added['result']}")[0] == 200

    for fault_id in (added["result"], 999_999):  # removed already; never given
        status, answer = standalone.http("DELETE", f"/faults/{fault_id}")
        assert (status, answer["ok"]) == (404, False)
        assert f"no active fault has id {fault_id}" in answer["error"]
    assert standalone.http("GET", "/faults") == (200, {"ok": True, "result": []})


def test_cli_removes_one_fault_by_id_and_it_no_longer_fires(standalone: Standalone) -> None:
    topic = standalone.topic()
    done = standalone.fault(
        "inject_error", "--api", "Produce", "--error", "TOPIC_AUTHORIZATION_FAILED",
        "--topic", topic, "--times", "100",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr

    removed = standalone.fault("remove", "--id", done.stdout.strip())

    assert (removed.returncode, json.loads(removed.stdout)) == (0, True), removed.stderr
    assert json.loads(standalone.fault("list").stdout) == []
    assert _produce(standalone, topic, [b"no longer refused"]) == [(None, 0)]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--id", "999999"], "no active fault has id 999999"),
        ([], "remove: give the fault's id (--id N"),
        (["--id", "-1"], "expected a fault id"),
    ],
)
def test_cli_removing_an_unknown_fault_exits_2_with_a_reason(
    standalone: Standalone, args: list[str], says: str
) -> None:
    done = standalone.fault("remove", *args)

    assert done.returncode == 2
    assert says in done.stderr
    assert "Traceback" not in done.stderr
