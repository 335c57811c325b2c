"""Decoding Kafka bytes and finding columns in rows of any shape."""

from __future__ import annotations

import pytest

from kafkatest.records import Record
from kafkatest.sinks.decode import decode, lookup, record_row


@pytest.mark.parametrize(
    ("data", "how", "expected"),
    [
        (b'{"a": 1}', "json", {"a": 1}),
        (b'{"a": 1}', "str", '{"a": 1}'),
        (b'{"a": 1}', "bytes", b'{"a": 1}'),
        (b"not json", "json", "not json"),
        (None, "json", None),
    ],
)
def test_decode(data, how, expected):
    assert decode(data, how) == expected


def test_decode_refuses_unknown_decodings():
    with pytest.raises(ValueError, match="decode as one of"):
        decode(b"x", "avro")  # type: ignore[arg-type]


def test_record_row_has_location_and_decoded_parts():
    record = Record.make("t", {"n": 1}, key="k", headers=[("h", "1"), ("h", "2")]).at(3, 7, 99)
    assert record_row(record) == {
        "topic": "t",
        "partition": 3,
        "offset": 7,
        "timestamp_ms": 99,
        "key": "k",
        "value": {"n": 1},
        "headers": {"h": "2"},
    }
    assert record_row(record, key="bytes", value="str")["key"] == b"k"


def test_lookup_finds_columns_dotted_paths_header_names_and_json_fields():
    row = {"id": 1, "value": {"order": {"id": 9}, "n": 2}, "headers": {"kafkatest.id": "x"}}
    assert lookup(row, "id") == (True, 1)
    assert lookup(row, "n") == (True, 2)
    assert lookup(row, "value.order.id") == (True, 9)
    assert lookup(row, "order.id") == (True, 9)
    assert lookup(row, "headers.kafkatest.id") == (True, "x")
    assert lookup(row, "nope") == (False, None)
