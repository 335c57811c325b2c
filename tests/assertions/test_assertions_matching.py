"""Matching by identity: seed ids, key columns the user names, ignored columns."""

from __future__ import annotations

import pytest

from kafkatest.assertions import DeliveryAssertionError, assert_at_least_once, assert_exactly_once
from kafkatest.records import Record

ORDERS = [
    {"order_id": 1, "user": "ann", "total": 5.0, "written_at": "2024-01-01T00:00:00"},
    {"order_id": 2, "user": "bob", "total": 7.5, "written_at": "2024-01-01T00:00:01"},
]


def test_seed_identity_is_found_in_flat_rows_by_its_id_field(make_seed):
    seed = make_seed(count=5, id_field="order_id")
    file_rows = [record.value_json() for record in seed]
    assert "order_id" in file_rows[0]
    assert assert_exactly_once(seed, file_rows).ok
    with pytest.raises(DeliveryAssertionError, match=r"matched on order_id or value\.order_id"):
        assert_exactly_once(seed, file_rows[1:])


def test_rows_match_on_the_key_columns_and_compare_the_rest_minus_ignored():
    actual = [{**row, "written_at": "later"} for row in ORDERS]
    assert assert_exactly_once(ORDERS, actual, on="order_id", ignore=["written_at"]).ok
    with pytest.raises(DeliveryAssertionError) as caught:
        assert_exactly_once(ORDERS, actual, on="order_id")
    message = str(caught.value)
    assert message.startswith("exactly-once delivery failed: 2 mismatched\n")
    assert "written_at: expected '2024-01-01T00:00:00', got 'later'" in message


def test_a_changed_value_is_a_mismatch_even_for_at_least_once():
    actual = [ORDERS[0], {**ORDERS[1], "total": 8.0}]
    with pytest.raises(DeliveryAssertionError) as caught:
        assert_at_least_once(ORDERS, actual, on=["order_id"], ignore=["written_at"])
    assert "- id 2 seen 1x at row 1 total: expected 7.5, got 8.0" in str(caught.value)


def test_several_key_columns_form_one_identity():
    expected = [{"user": "ann", "day": 1}, {"user": "ann", "day": 2}]
    actual = [{"user": "ann", "day": 2, "n": 3}, {"user": "ann", "day": 1, "n": 1}]
    assert assert_exactly_once(expected, actual, on=("user", "day")).ok
    with pytest.raises(DeliveryAssertionError, match="- id ann/2 "):
        assert_exactly_once(expected, actual[1:], on=("user", "day"))


def test_without_key_columns_whole_expected_rows_are_the_identity():
    expected = [{"word": "a", "count": 2}, {"word": "b", "count": 1}]
    actual = [{"word": "b", "count": 1, "window": "w1"}, {"word": "a", "count": 3, "window": "w1"}]
    with pytest.raises(DeliveryAssertionError) as caught:
        assert_exactly_once(expected, actual)
    report = caught.value.report
    assert report.matched_on == "count+word"
    assert [e.id for e in report.missing] == ["2/a"]
    assert [e.id for e in report.unexpected] == ["3/a"]


def test_repeated_expected_rows_must_each_arrive():
    expected = [{"word": "a"}, {"word": "a"}]
    assert assert_exactly_once(expected, [{"word": "a"}, {"word": "a"}]).ok
    with pytest.raises(DeliveryAssertionError, match="1 missing"):
        assert_exactly_once(expected, [{"word": "a"}])


def test_identities_compare_as_text_because_csv_loses_types():
    expected = [{"id": 5}, {"id": 6.0}]
    assert assert_exactly_once(expected, [{"id": "5"}, {"id": 6}], on="id").ok


def test_placed_records_carrying_the_id_header_are_expected_input():
    records = [
        Record.make("in", {"v": i}, headers={"kafkatest.id": f"r{i}"}).at(0, i) for i in range(3)
    ]
    actual = [{"value": {"v": 0}, "headers": {"kafkatest.id": "r0"}}]
    with pytest.raises(DeliveryAssertionError) as caught:
        assert_at_least_once(records, actual)
    assert "- id r1 from in[0]@1 " in str(caught.value)


def test_records_without_an_identity_ask_for_key_columns():
    records = [Record.make("in", {"v": 1}).at(0, 0)]
    with pytest.raises(ValueError, match="name the key columns with on="):
        assert_at_least_once(records, [])
    assert assert_at_least_once(records, [{"v": 1}], on="v").ok


def test_key_columns_reach_into_json_values_and_dotted_header_names(make_seed, sink_rows):
    seed = make_seed(count=6)
    rows = sink_rows(seed)
    assert assert_exactly_once(seed, rows, on="n").ok
    assert assert_exactly_once(seed, rows, on="headers.kafkatest.id").ok


def test_identity_is_found_in_sparks_headers_column():
    """A job that keeps Spark's headers column (a list of key/value structs) is traced too."""
    from kafkatest.assertions.rows import identify, seed_candidates

    row = {
        "order_id": "o-1",
        "headers": [
            {"key": "source", "value": bytearray(b"web")},
            {"key": "kafkatest.id", "value": bytearray(b"7")},
        ],
    }
    assert identify(row, seed_candidates(None, "kafkatest.id")) == ("7",)
    assert (
        identify({"headers": [{"key": "other", "value": b"1"}]}, [("headers.kafkatest.id",)])
        is None
    )
