"""`wait_for_rows` without a query (a job in a process of its own): the rows, or a
one-line timeout that says how many came. With a query it is run by
tests/test_real_time_mode.py against Spark."""

from __future__ import annotations

import pytest

from kafkatest.spark import QueryTimeout, wait_for_rows


def test_returns_the_rows_once_enough_have_come() -> None:
    reads = iter([[], [1], [1, 2, 3]])
    assert wait_for_rows(lambda: next(reads), 2, timeout_s=60) == [1, 2, 3]


def test_a_sink_short_of_rows_says_how_many_came() -> None:
    with pytest.raises(QueryTimeout, match=r"^the sink has 1 of the 5 rows expected after 0s"):
        wait_for_rows(lambda: [1], 5, timeout_s=0.2)
    with pytest.raises(ValueError, match="count must be 0 or more"):
        wait_for_rows(list, -1)
