"""The oracles plan their batches as Spark's Kafka source cuts them (KafkaMicroBatchStream's
rate limit); tests/oracles/test_restart_planning.py checks the plan against real runs."""

from __future__ import annotations

from kafkatest.oracles.batches import batch_ends, limit_for, most_batches, needed_batches


def test_a_partition_with_data_gets_at_least_one_record_per_batch() -> None:
    # Six records over three partitions are two batches even at a limit of 1.
    assert batch_ends({0: 2, 1: 2, 2: 2}, 1) == [{0: 1, 1: 1, 2: 1}, {0: 2, 1: 2, 2: 2}]
    assert most_batches({0: 2, 1: 2, 2: 2}) == 2


def test_the_limit_is_shared_in_proportion_to_each_partition_s_backlog() -> None:
    # 3 * 6/10 = 1.8 -> 1 and 3 * 4/10 = 1.2 -> 1; then 3 * 5/8 = 1.875 -> 1 ...
    assert batch_ends({0: 6, 1: 4}, 3) == [{0: 1, 1: 1}, {0: 2, 1: 2}, {0: 4, 1: 3}, {0: 6, 1: 4}]
    assert batch_ends({0: 6, 1: 4}, None) == [{0: 6, 1: 4}]
    assert batch_ends({0: 0, 1: 0}, 5) == []


def test_the_stops_need_the_batch_after_a_clean_stop_and_the_batch_of_a_crash() -> None:
    assert needed_batches([("after_batch", 1)]) == 3
    assert needed_batches([("crash_before_commit", 2)]) == 3
    assert needed_batches([("after_batch", 1), ("crash_before_commit", 4)]) == 5


def test_the_largest_limit_that_still_reaches_the_stops_is_chosen() -> None:
    assert limit_for({0: 6, 1: 4}, 4) == 3
    assert len(batch_ends({0: 6, 1: 4}, 4)) < 4
    assert limit_for({0: 2, 1: 2, 2: 2}, 3) is None  # no limit gives three batches
    assert limit_for({0: 6}, 3) == 2
    assert limit_for({0: 100}, 1) == 100
