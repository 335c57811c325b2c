"""`kafkatest capture` with input it once ended in a traceback (issue 44): clear errors,
no traceback, and a file written wherever the input is valid.

A JSON value, key or header holding an escaped lone surrogate (``{"a":"\\ud800"}``,
valid JSON) ended with UnicodeEncodeError and no file; a value nested 100,000 deep
with RecursionError; ``--since 1e20``, ``-o`` into a folder that does not exist, a
bootstrap nobody listens on and an unknown ``-X`` setting with tracebacks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkatest import Broker
from kafkatest.brokers.process import free_port
from kafkatest.cli import main
from kafkatest.records import Record
from kafkatest.seeding import seed

KEEP = {"retention.ms": "-1"}
LONE = b'{"a":"\\ud800","\\udc00":["x\\udfff"]}'
DEEP = b"[" * 100_000 + b"]" * 100_000


def _capture(bootstrap: str, topic: str, out: Path | str, *extra: str) -> int:
    return main(["capture", "--bootstrap", bootstrap, "--topic", topic, "-o", str(out), *extra])


@pytest.mark.kafka_backends("emulator")
def test_lone_surrogates_and_deep_nesting_are_captured_and_replayed_as_sent(
    kafka_broker: Broker, kafka_topic, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = kafka_topic(config=KEEP)
    kafka_broker.produce(
        [
            Record(topic, LONE, key=LONE, headers=(("h", LONE),)),
            Record(topic, DEEP, key=b"deep"),
        ]
    )
    out = tmp_path / "c.jsonl.gz"
    assert _capture(kafka_broker.bootstrap_servers, topic, out, "--salt", "s") == 0
    assert "Traceback" not in capsys.readouterr().err
    replayed = kafka_topic(config=KEEP)
    seed(kafka_broker, replayed, out)
    first, second = kafka_broker.consume(replayed)
    assert (first.value, first.key, first.headers) == (LONE, LONE, (("h", LONE),))
    assert (second.value, second.key) == (DEEP, b"deep")


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (("--since", "100000000000000000000"), "after the end of year 9999"),
        (("--since", "1e20"), "is not a time"),
        (("--until", "9" * 5_000), "after the end of year 9999"),
        (("--before", "-1"), "--before cannot be negative"),
    ],
)
def test_times_past_the_last_kafka_records_are_refused(
    kafka_broker: Broker,
    kafka_topic,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: tuple[str, ...],
    says: str,
) -> None:
    topic = kafka_topic()
    assert _capture(kafka_broker.bootstrap_servers, topic, tmp_path / "c.jsonl", *extra) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


def test_an_output_folder_that_does_not_exist_is_refused_before_connecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no" / "such" / "c.jsonl"
    assert _capture("127.0.0.1:1", "t", missing) == 2
    err = capsys.readouterr().err
    assert f"there is no folder {missing.parent}" in err and "Traceback" not in err


def test_an_unreachable_bootstrap_and_an_unknown_setting_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nobody = f"127.0.0.1:{free_port()}"
    assert _capture(nobody, "t", tmp_path / "c.jsonl") == 2
    err = capsys.readouterr().err
    assert f"cannot reach the cluster at {nobody}" in err and "Traceback" not in err
    assert _capture(nobody, "t", tmp_path / "c.jsonl", "-X", "bogus=1") == 2
    err = capsys.readouterr().err
    assert "bogus" in err and "Traceback" not in err
    assert _capture(nobody, "t", tmp_path / "c.jsonl", "-X", "bogus") == 2
    assert "give key=value" in capsys.readouterr().err
    assert not (tmp_path / "c.jsonl").exists()


def test_a_surrogate_line_is_valid_utf8_json() -> None:
    from kafkatest.seeding.capture_file import dumps, encode_bytes

    line = dumps({"value": encode_bytes(LONE)})
    assert json.loads(line.encode("utf-8"))["value"] == {"json": json.loads(LONE)}
