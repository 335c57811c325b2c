"""seed(): identities, keys, envelopes, fixture files and the SeedResult it returns."""

from __future__ import annotations

import json

import pytest

from kafkatest.records import Record
from kafkatest.seeding import DEFAULT_ID_HEADER, Origin, seed


def test_dict_values_become_keyed_json_records_with_an_id_header(memory_log):
    result = seed(
        memory_log, "t", [{"user": "ann", "n": 1}, {"user": "bob", "n": 2}], key_field="user"
    )
    assert result.ids == ("0", "1")
    first = result.record("0")
    assert first.key == b"ann"
    assert first.value_json() == {"user": "ann", "n": 1}
    assert first.header(DEFAULT_ID_HEADER) == b"0"
    assert result.where("1") == Origin("t", result.records[1].partition, 0)


def test_id_field_is_written_into_json_values_or_read_from_them(memory_log):
    result = seed(memory_log, "t", [{"order_id": "o-9"}, {"n": 1}], id_field="order_id")
    assert result.ids == ("o-9", "1")
    assert result.record("1").value_json() == {"order_id": "1", "n": 1}
    assert result.record("o-9").header(DEFAULT_ID_HEADER) == b"o-9"


def test_id_field_alone_cannot_identify_text_values(memory_log):
    with pytest.raises(ValueError, match="item 0: its value is not a JSON object"):
        seed(memory_log, "t", ["plain"], id_field="id", id_header=None)


def test_every_record_needs_an_identity_and_a_unique_one(memory_log):
    with pytest.raises(ValueError, match="name an id_header or an id_field"):
        seed(memory_log, "t", [{"a": 1}], id_header=None)
    with pytest.raises(ValueError, match="item 1: id 'x' is used twice"):
        seed(memory_log, "t", [{"id": "x"}, {"id": "x"}], id_field="id")


def test_id_prefix_keeps_a_second_seed_of_the_same_topic_apart(memory_log):
    first = seed(memory_log, "t", ["a", "b"])
    second = seed(memory_log, "t", ["c"], id_prefix="late-")
    assert second.ids == ("late-0",)
    assert set(first.ids).isdisjoint(second.ids)


def test_envelopes_set_key_headers_partition_and_timestamp(memory_log):
    result = seed(
        memory_log,
        "t",
        [
            {
                "key": "k",
                "value": "v",
                "headers": {"h": "x", DEFAULT_ID_HEADER: "given"},
                "partition": 2,
                "timestamp_ms": 5,
            },
            {"value": {"value": 1}},  # an envelope whose value looks like one
        ],
    )
    placed = result.record("given")
    assert (placed.key, placed.value, placed.partition, placed.timestamp_ms) == (b"k", b"v", 2, 5)
    assert placed.headers == (("h", b"x"), (DEFAULT_ID_HEADER, b"given"))
    assert result.record("1").value_json() == {"value": 1}


def test_ready_records_keep_their_bytes_and_get_the_seed_topic(memory_log):
    raw = Record(topic="", value=b"\x00\x01", key=b"k", partition=1)
    result = seed(memory_log, "t", [raw])
    assert (result.records[0].topic, result.records[0].value, result.records[0].partition) == (
        "t",
        b"\x00\x01",
        1,
    )


def test_key_field_must_exist(memory_log):
    with pytest.raises(ValueError, match="item 0: key_field 'user' is not a field"):
        seed(memory_log, "t", [{"name": "ann"}], key_field="user")


def test_result_reports_offsets_per_partition_and_ids_by_range(memory_log):
    result = seed(memory_log, "t", [{"value": i, "partition": i % 2} for i in range(6)])
    assert result.offsets_by_partition == {0: [0, 1, 2], 1: [0, 1, 2]}
    assert result.ids_in(1, range(1, 3)) == ["3", "5"]
    assert len(result) == 6 and list(result) == list(result.records)
    with pytest.raises(KeyError, match="no record with id 'nope' was seeded to 't'"):
        result.where("nope")


def test_json_lines_fixture_mixes_envelopes_and_values(memory_log, fixtures_dir):
    result = seed(memory_log, "orders", fixtures_dir / "orders.jsonl", id_field="order_id")
    assert result.ids == ("o-1", "o-2", "o-3", "o-4")
    o2 = result.record("o-2")
    assert (o2.key, o2.partition, o2.header("source")) == (b"bob", 1, b"app")
    assert o2.timestamp_ms == 1714557601000
    assert json.loads(result.record("o-4").value) == {
        "user": "cid",
        "order_id": "o-4",
        "total": 1.0,
    }


def test_yaml_fixture_turns_dates_into_iso_text(memory_log, fixtures_dir):
    result = seed(memory_log, "orders", str(fixtures_dir / "orders.yaml"), id_field="order_id")
    assert result.record("o-1").timestamp_ms == 1714557600000
    assert result.record("o-3").value_json()["placed"] == "2024-05-01"


def test_a_repeated_header_reads_as_its_last_value(memory_log) -> None:
    """Kafka allows a header name twice; the last one wins, as in Spark: in a record and
    in the identity a seeded envelope gives in its headers."""
    record = Record(topic="t", value=b"v", headers=(("h", b"1"), ("x", None), ("h", b"2")))
    assert (record.header("h"), record.header("x"), record.header("missing")) == (b"2", None, None)
    twice = [(DEFAULT_ID_HEADER, "first"), (DEFAULT_ID_HEADER, "last")]
    assert seed(memory_log, "t", [{"value": 1, "headers": twice}]).ids == ("last",)
