"""At-least-once, exactly-once and no-loss: passing and failing, with the message."""

from __future__ import annotations

import pytest

from kafkatest.assertions import (
    DeliveryAssertionError,
    assert_at_least_once,
    assert_exactly_once,
    assert_no_loss,
    delivery_report,
)

STRANGER = {"topic": "out", "partition": 1, "offset": 999, "value": {"x": 1}, "headers": {}}


def test_at_least_once_passes_with_duplicates_and_counts_them(make_seed, sink_rows):
    seed = make_seed()
    report = assert_at_least_once(seed, sink_rows(seed, repeat=["7", "7", "8"]))
    assert report.ok
    assert report.counts() == {
        "expected": 100,
        "seen": 103,
        "distinct": 100,
        "missing": 0,
        "duplicated": 2,
        "extra_copies": 3,
        "unexpected": 0,
        "mismatched": 0,
        "out_of_order": 0,
        "expected_loss": 0,
    }


def test_at_least_once_names_lost_records_their_origin_and_lost_ranges(make_seed, sink_rows):
    seed = make_seed()
    with pytest.raises(DeliveryAssertionError) as caught:
        assert_at_least_once(seed, sink_rows(seed, drop=["10", "42"], repeat=["7"]))
    message = str(caught.value)
    assert message.startswith("at-least-once delivery failed: 2 missing\n")
    assert (
        "expected 100, seen 99, distinct 98, missing 2, duplicated 1 (+1 copies), unexpected 0"
        in (message)
    )
    assert "matched on headers.kafkatest.id or kafkatest.id" in message
    assert '- id 10 from orders[0]@5 {"key": "u1", "value": {"user": "u1", "n": 10}}' in message
    assert "- id 42 from orders[0]@21 " in message
    assert (
        "duplicated (allowed): 1\n  - id 7 from orders[1]@3 seen 2x at out[1]@3, out[1]@10000"
        in (message)
    )
    assert "orders[0]: seeded 0-49 (50); delivered 0-4, 6-20, 22-49; lost 5, 21" in message
    assert "orders[1]: seeded 0-49 (50); delivered 0-49; duplicated 3" in message
    assert [e.id for e in caught.value.report.missing] == ["10", "42"]


def test_at_least_once_fails_on_a_record_nobody_seeded(make_seed, sink_rows):
    seed = make_seed(count=10)
    with pytest.raises(DeliveryAssertionError) as caught:
        assert_at_least_once(seed, [*sink_rows(seed), STRANGER])
    message = str(caught.value)
    assert message.startswith("at-least-once delivery failed: 1 unexpected\n")
    assert "unexpected: 1\n  - id (no identity) seen 1x at out[1]@999 " in message
    assert caught.value.report.unexpected[0].row == STRANGER


def test_exactly_once_passes_on_an_exact_copy(make_seed, sink_rows):
    seed = make_seed()
    report = assert_exactly_once(seed, sink_rows(seed))
    assert (report.expected, report.seen, report.distinct) == (100, 100, 100)
    assert report.message().startswith("exactly-once delivery held")


def test_exactly_once_fails_on_a_duplicate(make_seed, sink_rows):
    seed = make_seed()
    with pytest.raises(DeliveryAssertionError) as caught:
        assert_exactly_once(seed, sink_rows(seed, repeat=["3"]))
    message = str(caught.value)
    assert message.startswith("exactly-once delivery failed: 1 duplicated\n")
    assert "duplicated: 1\n  - id 3 from orders[1]@1 seen 2x at out[1]@1, out[1]@10000" in message
    assert "orders[1]: seeded 0-49 (50); delivered 0-49; duplicated 1" in message


def test_exactly_once_lists_only_the_first_five_of_many(make_seed, sink_rows):
    seed = make_seed()
    lost = [str(i) for i in range(0, 40, 2)]
    with pytest.raises(DeliveryAssertionError) as caught:
        assert_exactly_once(seed, sink_rows(seed, drop=lost))
    message = str(caught.value)
    assert "missing: first 5 of 20\n" in message
    assert message.count("  - id ") == 5
    assert "orders[0]: seeded 0-49 (50); delivered 20-49; lost 0-19" in message
    assert len(caught.value.report.missing) == 20


def test_no_loss_allows_duplicates_and_strangers(make_seed, sink_rows):
    seed = make_seed(count=20)
    report = assert_no_loss(seed, [*sink_rows(seed, repeat=["1"]), STRANGER])
    assert report.ok
    assert (len(report.duplicated), len(report.unexpected)) == (1, 1)


def test_no_loss_fails_on_one_lost_record(make_seed, sink_rows):
    seed = make_seed(count=20)
    with pytest.raises(DeliveryAssertionError) as caught:
        assert_no_loss(seed, sink_rows(seed, drop=["19"]))
    assert str(caught.value).startswith("no-loss delivery failed: 1 missing\n")
    assert "- id 19 from orders[1]@9 " in str(caught.value)


def test_an_empty_sink_loses_everything(make_seed):
    seed = make_seed(count=4, partitions=1)
    with pytest.raises(DeliveryAssertionError) as caught:
        assert_at_least_once(seed, [])
    assert "orders[0]: seeded 0-3 (4); delivered none; lost 0-3" in str(caught.value)


def test_delivery_report_never_raises(make_seed):
    report = delivery_report(make_seed(count=3), [])
    assert not report.failures
    assert len(report.missing) == 3


def test_the_error_is_an_assertion_error_carrying_the_report(make_seed):
    seed = make_seed(count=2)
    with pytest.raises(AssertionError) as caught:
        assert_exactly_once(seed, [])
    assert isinstance(caught.value, DeliveryAssertionError)
    assert caught.value.report.failures == ("missing",)


def test_each_check_fails_on_exactly_its_row_of_the_guarantees_table(make_seed, sink_rows):
    """The checks differ only by their `GUARANTEES` row: with a record lost, one
    duplicated and a stranger, each fails on its row's kinds that were found."""
    from kafkatest.assertions.delivery import GUARANTEES, assert_expected_loss

    seed = make_seed()
    rows = [*sink_rows(seed, drop=["10"], repeat=["7"]), STRANGER]
    found = {"missing", "duplicated", "unexpected"}
    checks = {
        "exactly-once": assert_exactly_once,
        "at-least-once": assert_at_least_once,
        "no-loss": assert_no_loss,
        "expected-loss": lambda e, a: assert_expected_loss(e, a, {}),
    }
    for guarantee, check in checks.items():
        with pytest.raises(DeliveryAssertionError) as caught:
            check(seed, rows)
        wanted = tuple(kind for kind in GUARANTEES[guarantee] if kind in found)
        assert (caught.value.report.guarantee, caught.value.report.failures) == (guarantee, wanted)
    assert delivery_report(seed, rows).failures == ()
