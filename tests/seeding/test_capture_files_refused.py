"""`seed()` from a capture file that is not right: the line and the field are named, and
nothing is seeded (issue 44).

The whole file is checked before a record is written (`seeding.capture_check`), within
kafkatest's bounds (a line, the file decompressed); a file that passes is replayed into
a topic created as captured when it does not exist, and a broker that refuses part-way
is reported with exactly what was seeded before it.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafkatest import Broker
from kafkatest.limits import MAX_CAPTURE_LINE_BYTES
from kafkatest.seeding import replay as replay_module, seed
from kafkatest.seeding.capture_file import CaptureFormatError

emulator_only = pytest.mark.kafka_backends("emulator")
NOW = 1_700_000_000_000


def _header(partitions: int = 2, ranges: dict[str, list[int]] | None = None) -> dict[str, Any]:
    spans = ranges if ranges is not None else {"0": [0, 3], "1": [0, 3]}
    return {
        "kafkatest_capture": 1,
        "topics": {"src": {"partitions": partitions, "configs": {}, "ranges": spans}},
        "anonymized": {},
    }


def _record(partition: int = 0, offset: int = 0, **changes: Any) -> dict[str, Any]:
    entry = {
        "topic": "src",
        "partition": partition,
        "offset": offset,
        "timestamp": NOW + offset,
        "timestamp_type": "create",
        "key": {"text": f"k{offset}"},
        "value": {"json": {"n": offset}},
        "headers": [["h", {"base64": "AAE="}]],
    }
    entry.update(changes)
    return entry


def _valid() -> list[dict[str, Any]]:
    return [_header(), *(_record(p, o) for p in (0, 1) for o in range(3))]


def _lines(*entries: Any) -> bytes:
    return b"".join(json.dumps(e).encode() + b"\n" for e in entries)


def _write(tmp_path: Path, data: bytes, name: str = "c.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def _bomb(inflated_mib: int) -> bytes:
    """A gzip of `inflated_mib` MiB of zeros, small: one member of 1 MiB, repeated."""
    return _gzip(bytes(1 << 20)) * inflated_mib


#: (case, file name, file bytes, what the error says)
BAD: list[tuple[str, str, Callable[[], bytes], str]] = [
    ("empty gzip", "c.jsonl.gz", lambda: _gzip(b""), "empty: a capture starts with its header"),
    ("null line", "c.jsonl", lambda: _lines(_header()) + b"null\n", ":2: a line holds a JSON object"),
    ("timestamp text", "c.jsonl", lambda: _lines(_header(), _record(timestamp="noon")), ":2: timestamp:"),
    ("timestamp float", "c.jsonl", lambda: _lines(_header(), _record(timestamp=1.5)), ":2: timestamp:"),
    ("timestamp 10^20", "c.jsonl", lambda: _lines(_header(), _record(timestamp=10**20)), ":2: timestamp:"),
    ("deep value", "c.jsonl", lambda: _lines(_header()) + b'{"value": {"json": ' + b"[" * 500 + b"]" * 500 + b"}}\n", ":2: it nests deeper than"),
    ("bad UTF-8", "c.jsonl", lambda: _lines(_header()) + b'{"topic": "\xff"}\n', ":2: not UTF-8"),
    ("not gzip", "c.jsonl.gz", lambda: _lines(*_valid()), ":1: the gzip stream is not gzip"),
    ("truncated gzip", "c.jsonl.gz", lambda: _gzip(_lines(*_valid()))[:-30], "is truncated"),
    ("offset 2^63", "c.jsonl", lambda: _lines(_header(ranges={}), _record(offset=2**63)), ":2: offset:"),
    ("range 2^63", "c.jsonl", lambda: _lines(_header(ranges={"0": [2**63 - 5, 2**63]})), ":1: topics.src.ranges.0:"),
    ("partition -1", "c.jsonl", lambda: _lines(_header(), _record(partition=-1)), ":2: partition:"),
    ("partition 1.7", "c.jsonl", lambda: _lines(_header(), _record(partition=1.7)), ":2: partition:"),
    ("partition true", "c.jsonl", lambda: _lines(_header(), _record(partition=True)), ":2: partition:"),
    ("partition 5", "c.jsonl", lambda: _lines(_header(), _record(partition=5)), ":2: partition:"),
    ("bad base64", "c.jsonl", lambda: _lines(_header(), _record(value={"base64": "QUJD@@"})), ":2: value.base64: not base64"),
    ("two forms", "c.jsonl", lambda: _lines(_header(), _record(key={"text": "a", "json": 1})), ":2: key: exactly one of"),
    ("blank first line", "c.jsonl", lambda: b"\n" + _lines(*_valid()), ":1: an empty line"),
    ("offsets backwards", "c.jsonl", lambda: _lines(_header(), _record(offset=2), _record(offset=1)), ":3: offset: 1 comes after 2"),
    ("outside its range", "c.jsonl", lambda: _lines(_header(), _record(offset=7)), ":2: offset: 7 is outside the range read"),
    ("second header", "c.jsonl", lambda: _lines(_header(), _header()), ":2: a second header"),
    ("another topic", "c.jsonl", lambda: _lines(_header(), _record(topic="other")), ":2: topic:"),
    ("unknown schema", "c.jsonl", lambda: _lines(_header(), _record(value={"avro": 1, "schema_id": 9})), ":2: value.schema_id: 9 is not a schema line"),
    ("two topics", "c.jsonl", lambda: _lines({**_header(), "topics": {"a": {"partitions": 1}, "b": {"partitions": 1}}}), ":1: topics: a capture to replay holds one topic"),
    ("gzip bomb", "c.jsonl.gz", lambda: _bomb(80), f":1: longer than {MAX_CAPTURE_LINE_BYTES} bytes"),
]  # fmt: skip


@emulator_only
@pytest.mark.parametrize(("case", "name", "make", "says"), BAD, ids=[case for case, *_ in BAD])
def test_a_bad_capture_is_refused_by_line_and_field_and_seeds_nothing(
    kafka_broker: Broker,
    kafka_topic: Callable[..., str],
    tmp_path: Path,
    case: str,
    name: str,
    make: Callable[[], bytes],
    says: str,
) -> None:
    topic = kafka_topic(partitions=2)
    path = _write(tmp_path, make(), name)
    with pytest.raises(CaptureFormatError) as refused:
        seed(kafka_broker, topic, path)
    assert str(path) in str(refused.value)
    assert says in str(refused.value), f"{case}: {refused.value}"
    assert kafka_broker.latest_offsets(topic) == {0: 0, 1: 0}


@emulator_only
def test_a_truncated_gzip_of_many_records_seeds_none_of_them(
    kafka_broker: Broker, kafka_topic: Callable[..., str], tmp_path: Path
) -> None:
    """It once left 10,000 records seeded before its error."""
    records = [_record(0, n) for n in range(12_000)]
    whole = _gzip(_lines(_header(1, {"0": [0, 12_000]}), *records))
    path = _write(tmp_path, whole[: len(whole) * 3 // 4], "c.jsonl.gz")
    topic = kafka_topic()
    with pytest.raises(CaptureFormatError, match="truncated"):
        seed(kafka_broker, topic, path)
    assert kafka_broker.latest_offsets(topic) == {0: 0}


@emulator_only
def test_newlines_are_refused_at_the_first(
    kafka_broker: Broker, kafka_topic: Callable[..., str], tmp_path: Path
) -> None:
    """1 GB of newlines once cost 252 s (`docs/development.md` has the figure for 1 GB)."""
    path = _write(tmp_path, b"\n" * (50 << 20), "c.jsonl.gz")
    path.write_bytes(_gzip(path.read_bytes()))
    with pytest.raises(CaptureFormatError, match=":1: an empty line"):
        seed(kafka_broker, kafka_topic(), path)


def test_a_capture_seeds_a_missing_topic_as_captured(kafka_broker: Broker, tmp_path: Path) -> None:
    """A topic that does not exist is created with the captured partition count and
    retention.ms=-1 (the records' old timestamps stay), not the broker's defaults."""
    topic = f"captured-{tmp_path.name[-12:]}"
    path = _write(tmp_path, _lines(*_valid()))
    result = seed(kafka_broker, topic, path)
    assert len(result.records) == 6
    assert kafka_broker.latest_offsets(topic) in ({0: 3, 1: 3},)
    assert kafka_broker.topic_config_overrides(topic).get("retention.ms") == "-1"


def test_a_topic_with_fewer_partitions_is_refused_saying_how(
    kafka_broker: Broker, kafka_topic: Callable[..., str], tmp_path: Path
) -> None:
    topic = kafka_topic(partitions=1)
    path = _write(tmp_path, _lines(*_valid()))
    with pytest.raises(CaptureFormatError, match=r"create it with 2 \(kafka_topic\(partitions=2\)"):
        seed(kafka_broker, topic, path)
    assert kafka_broker.latest_offsets(topic) == {0: 0}


@emulator_only
def test_a_refusal_part_way_says_exactly_what_was_seeded(
    kafka_broker: Broker,
    kafka_topic: Callable[..., str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A file the checks pass can still be refused by the broker (a timestamp past
    message.timestamp.after.max.ms): the error says what the chunks before it wrote."""
    from kafkatest.errors import BrokerError

    monkeypatch.setattr(replay_module, "_CHUNK", 2)
    topic = kafka_topic()
    records = [_record(0, n, timestamp=NOW if n < 4 else 200_000_000_000_000) for n in range(6)]
    path = _write(tmp_path, _lines(_header(1, {"0": [0, 6]}), *records))
    kafka_broker.alter_topic_config(topic, {"retention.ms": -1})
    with pytest.raises(BrokerError) as refused:
        seed(kafka_broker, topic, path)
    assert f"4 of the 6 records of {path} were seeded before it (partition 0: offsets 0-3)" in str(
        refused.value
    )
    assert kafka_broker.latest_offsets(topic) == {0: 4}


def test_a_fixture_s_blank_lines_are_counted_not_split(tmp_path: Path) -> None:
    """A JSON Lines fixture (no capture header) of 50 MB of newlines: skipped a chunk at
    a time (a billion newlines once took minutes and tens of GB), the lines still
    counted, so an error after them names its line."""
    from kafkatest.seeding.files import load_fixture

    blank = 50 << 20
    path = _write(tmp_path, b"\n" * blank + b'{"n": 1}\n' + b"\n" * 3 + b"not json\n")
    with pytest.raises(ValueError, match=rf":{blank + 5}: not JSON"):
        load_fixture(path)
    path.write_bytes(b"\n" * blank + b'{"n": 1}\n')
    assert load_fixture(path) == [{"n": 1}]
