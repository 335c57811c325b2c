"""Expected loss (failOnDataLoss=false) and per-key order, passing and failing."""

from __future__ import annotations

import pytest

from kafkatest.assertions import (
    DeliveryAssertionError,
    assert_expected_loss,
    assert_order_per_key,
)

# make_seed places record i at partition i % 2, offset i // 2: p0 offsets 10-19 are ids 20-38.
LOST_P0_10_TO_19 = [str(i) for i in range(20, 40, 2)]


@pytest.mark.parametrize(
    "spec",
    [
        {("orders", 0): range(10, 20)},
        {("orders", 0): (10, 20)},
        {("orders", 0): [range(10, 15), range(15, 20)]},
        [("orders", 0, 10, 20)],
    ],
)
def test_loss_inside_the_given_ranges_passes(make_seed, sink_rows, spec):
    seed = make_seed()
    report = assert_expected_loss(seed, sink_rows(seed, drop=LOST_P0_10_TO_19), spec)
    assert len(report.expected_loss) == 10
    assert "orders[0]: seeded 0-49 (50); delivered 0-9, 20-49; lost as expected 10-19" in (
        report.message()
    )


def test_records_of_the_range_may_still_arrive(make_seed, sink_rows):
    seed = make_seed()
    report = assert_expected_loss(seed, sink_rows(seed, drop=["20"]), [("orders", 0, 10, 20)])
    assert [e.origin.offset for e in report.expected_loss] == [10]


def test_loss_outside_the_ranges_fails_and_names_only_that_record(make_seed, sink_rows):
    seed = make_seed()
    rows = sink_rows(seed, drop=[*LOST_P0_10_TO_19, "40", "41"])
    with pytest.raises(DeliveryAssertionError) as caught:
        assert_expected_loss(seed, rows, {("orders", 0): range(10, 20)})
    message = str(caught.value)
    assert message.startswith("expected-loss delivery failed: 2 missing\n")
    assert "- id 40 from orders[0]@20 " in message
    assert "- id 41 from orders[1]@20 " in message
    assert "lost as expected 10" in message
    assert "delivered 0-9, 21-49; lost 20; lost as expected 10-19" in message


def test_ranges_are_per_partition(make_seed, sink_rows):
    seed = make_seed()
    with pytest.raises(DeliveryAssertionError) as caught:
        assert_expected_loss(
            seed, sink_rows(seed, drop=["20", "21"]), {("orders", 1): range(10, 11)}
        )
    assert str(caught.value).startswith("expected-loss delivery failed: 1 missing\n")
    assert "missing: 1\n  - id 20 from orders[0]@10 " in str(caught.value)


def test_duplicates_fail_expected_loss_only_when_refused(make_seed, sink_rows):
    seed = make_seed()
    rows = sink_rows(seed, repeat=["5"])
    assert assert_expected_loss(seed, rows, {}).ok
    with pytest.raises(DeliveryAssertionError, match="failed: 1 duplicated"):
        assert_expected_loss(seed, rows, {}, allow_duplicates=False)


def test_order_per_key_holds_when_each_key_arrives_in_seed_order(make_seed, sink_rows):
    seed = make_seed(count=12, partitions=1)
    assert assert_order_per_key(seed, sink_rows(seed)).ok


def test_order_per_key_names_the_record_that_overtook(make_seed, sink_rows):
    seed = make_seed(count=12, partitions=1)
    rows = sink_rows(seed)
    rows[1], rows[4] = rows[4], rows[1]  # ids 1 and 4 share key u1
    with pytest.raises(DeliveryAssertionError) as caught:
        assert_order_per_key(seed, rows)
    message = str(caught.value)
    assert message.startswith("per-key-order delivery failed: 1 out of order\n")
    assert (
        "- id 1 from orders[0]@1 seen 1x at out[0]@1 key 'u1': arrived after id 4 "
        "(orders[0]@4), which was seeded later" in message
    )


def test_a_replayed_batch_is_not_an_order_violation(make_seed, sink_rows):
    seed = make_seed(count=6, partitions=1)
    rows = sink_rows(seed, repeat=["0", "1", "2", "3"])
    assert assert_order_per_key(seed, rows).ok


def test_order_by_sorts_the_sink_rows_first(make_seed, sink_rows):
    seed = make_seed(count=6, partitions=1)
    rows = list(reversed(sink_rows(seed)))
    with pytest.raises(DeliveryAssertionError, match="failed: 3 out of order"):
        assert_order_per_key(seed, rows, key="user")
    assert assert_order_per_key(seed, rows, key="user", order_by="offset").ok


def test_order_of_different_keys_is_free(make_seed, sink_rows):
    seed = make_seed(count=3, partitions=1)
    assert assert_order_per_key(seed, list(reversed(sink_rows(seed)))).ok
