"""allow_late excuses only what records behind the watermark can explain.

A record late in one run only can take from that run (a row missing, a count or sum
lower by what it held, a session split in two), never add to it. These build two runs'
differences by hand, so each rule is checked on its own, without Spark.
"""

from __future__ import annotations

from typing import Any

from kafkatest.oracles.compare import Lateness, RowDifference, Tracer, explain
from kafkatest.oracles.excuses import judge_late
from kafkatest.oracles.inputs import InputRecord
from kafkatest.records import Record

ONE, SPLIT = "one batch", "maxOffsetsPerTrigger=1"


def click(index: int, user: str, ts: str, page: str = "/", amount: float = 1.0) -> InputRecord:
    value = f'{{"user": "{user}", "ts": "{ts}", "page": "{page}", "amount": {amount}}}'
    return InputRecord(
        index, str(index), Record(topic="t", key=user.encode(), value=value.encode())
    )


INPUTS = [
    click(0, "ann", "2024-05-01T10:00:05Z", amount=10.0),
    click(1, "ann", "2024-05-01T10:00:30Z", amount=5.25),
    click(2, "ann", "2024-05-01T10:03:00Z", amount=2.0),
    click(3, "bob", "2024-05-01T10:00:40Z", amount=7.0),
    click(4, "ann", "2024-05-01T10:06:00Z", amount=1.0),
]


def window_row(user: str, start: str, end: str, pages: int, total: float) -> dict[str, Any]:
    value = {"window": {"start": start, "end": end}, "user": user, "pages": pages, "total": total}
    return {"key": user, "value": value}


def late_in(run: str, *indexes: int) -> dict[int, Lateness]:
    return {
        i: Lateness(i, INPUTS[i].describe(), 0, {run: "batch 3, watermark ..."}) for i in indexes
    }


def judged(
    late: dict[int, Lateness],
    only_one: list[dict[str, Any]],
    only_split: list[dict[str, Any]],
) -> tuple[list[RowDifference], list[RowDifference]]:
    tracer = Tracer(INPUTS, "ts", None)
    one = explain(tracer, only_one, ONE, late)
    split = explain(tracer, only_split, SPLIT, late)
    judge_late(tracer, late, {ONE: one, SPLIT: split}, 1e-9)
    return one, split


def test_a_window_smaller_by_exactly_the_late_record_is_excused() -> None:
    one, split = judged(
        late_in(SPLIT, 1),
        [window_row("ann", "2024-05-01T10:00:00Z", "2024-05-01T10:01:00Z", 2, 15.25)],
        [window_row("ann", "2024-05-01T10:00:00Z", "2024-05-01T10:01:00Z", 1, 10.0)],
    )
    assert all(d.explained_by_late_data for d in one + split)
    assert "#1" in split[0].excuse and SPLIT in split[0].excuse


def test_a_count_that_grew_where_the_late_record_could_only_take_is_not_excused() -> None:
    """The redelivery false pass: the run with late copies wrote a doubled count."""
    one, split = judged(
        late_in(SPLIT, 1),
        [window_row("ann", "2024-05-01T10:00:00Z", "2024-05-01T10:01:00Z", 2, 15.25)],
        [window_row("ann", "2024-05-01T10:00:00Z", "2024-05-01T10:01:00Z", 4, 30.5)],
    )
    assert not any(d.explained_by_late_data for d in one + split)
    assert "grew in 'maxOffsetsPerTrigger=1'" in split[0].refusal


def test_a_smaller_sum_that_is_not_what_the_late_record_held_is_not_excused() -> None:
    one, split = judged(
        late_in(SPLIT, 1),
        [window_row("ann", "2024-05-01T10:00:00Z", "2024-05-01T10:01:00Z", 2, 15.25)],
        [window_row("ann", "2024-05-01T10:00:00Z", "2024-05-01T10:01:00Z", 1, 9.0)],
    )
    assert not any(d.explained_by_late_data for d in one + split)
    assert "no choice of the late records explains" in split[0].refusal


def test_a_row_missing_where_all_its_records_were_late_is_excused() -> None:
    one, _ = judged(
        late_in(SPLIT, 3),
        [window_row("bob", "2024-05-01T10:00:00Z", "2024-05-01T10:01:00Z", 1, 7.0)],
        [],
    )
    assert one[0].explained_by_late_data


def test_a_row_missing_though_some_of_its_records_were_on_time_is_not_excused() -> None:
    """ann's 10:00 window had #0 on time in the split run: it must still be there."""
    one, _ = judged(
        late_in(SPLIT, 1),
        [window_row("ann", "2024-05-01T10:00:00Z", "2024-05-01T10:01:00Z", 2, 15.25)],
        [],
    )
    assert not one[0].explained_by_late_data


def test_a_row_that_appeared_in_the_run_with_the_late_record_is_not_excused() -> None:
    _, split = judged(
        late_in(SPLIT, 3),
        [],
        [window_row("bob", "2024-05-01T10:00:00Z", "2024-05-01T10:01:00Z", 1, 7.0)],
    )
    assert not split[0].explained_by_late_data
    assert "appeared in 'maxOffsetsPerTrigger=1'" in split[0].refusal


def session(user: str, start: str, end: str, pages: int) -> dict[str, Any]:
    return {"key": user, "value": {"session_window": {"start": start, "end": end}, "pages": pages}}


def test_a_session_split_in_two_by_a_late_record_is_excused() -> None:
    """#2 (10:03) bridged ann's clicks of 10:00 and 10:06 into one 5-minute-gap session;
    without it the split run has two smaller sessions inside that one."""
    one, split = judged(
        late_in(SPLIT, 2),
        [session("ann", "2024-05-01T10:00:05Z", "2024-05-01T10:11:00Z", 4)],
        [
            session("ann", "2024-05-01T10:00:05Z", "2024-05-01T10:05:30Z", 2),
            session("ann", "2024-05-01T10:06:00Z", "2024-05-01T10:11:00Z", 1),
        ],
    )
    assert all(d.explained_by_late_data for d in one + split)


def test_split_sessions_with_more_pages_than_the_whole_are_not_excused() -> None:
    one, split = judged(
        late_in(SPLIT, 2),
        [session("ann", "2024-05-01T10:00:05Z", "2024-05-01T10:11:00Z", 4)],
        [
            session("ann", "2024-05-01T10:00:05Z", "2024-05-01T10:05:30Z", 3),
            session("ann", "2024-05-01T10:06:00Z", "2024-05-01T10:11:00Z", 2),
        ],
    )
    assert not any(d.explained_by_late_data for d in one + split)


def test_a_maximum_taken_from_the_late_record_is_excused() -> None:
    def latest(value: str) -> dict[str, Any]:
        return {"key": "ann", "value": {"user": "ann", "last_seen": value}}

    one, split = judged(
        late_in(SPLIT, 4),
        [latest("2024-05-01T10:06:00Z")],
        [latest("2024-05-01T10:03:00Z")],
    )
    assert all(d.explained_by_late_data for d in one + split)
    one, split = judged(
        late_in(SPLIT, 4), [latest("2024-05-01T10:06:00Z")], [latest("2024-05-01T10:09:00Z")]
    )
    assert not any(d.explained_by_late_data for d in one + split)


def test_rounded_sums_are_excused_within_their_rounding() -> None:
    one, split = judged(
        late_in(SPLIT, 1),
        [window_row("ann", "2024-05-01T10:00:00Z", "2024-05-01T10:01:00Z", 2, 15.3)],
        [window_row("ann", "2024-05-01T10:00:00Z", "2024-05-01T10:01:00Z", 1, 10.0)],
    )
    # 10.0 + 5.25 rounded to one decimal is 15.3 (or 15.2): within half its last digit per row
    assert all(d.explained_by_late_data for d in one + split)


def test_a_record_is_late_in_a_run_only_when_every_copy_of_it_was() -> None:
    """Redelivery: a copy dropped behind the watermark while its original counted takes
    nothing from the run, so it excuses nothing."""
    from kafkatest.oracles.compare import late_records
    from kafkatest.oracles.runs import Batch, RunResult

    tracer = Tracer(INPUTS, "ts", None)
    once = RunResult("once", {}, placement={(0, 0): (1, 0)})
    once.batches = [Batch(0, {0: 1}, 0, True)]
    copies = RunResult("copies=2", {}, placement={(0, 0): (1, 0), (0, 1): (1, 1)})
    watermark = 1_714_557_600_000 + 120_000  # 10:02, past #1's 10:00:30
    copies.batches = [Batch(0, {0: 1}, 0, True), Batch(1, {0: 2}, watermark, True)]
    assert late_records(tracer, [once, copies]) == {}  # the original counted
    both_late = RunResult("copies=2", {}, placement={(0, 0): (1, 0), (0, 1): (1, 1)})
    both_late.batches = [Batch(0, {0: 2}, watermark, True)]
    assert list(late_records(tracer, [once, both_late])) == [1]


def test_the_verdict_says_how_many_rows_were_held_to_equality_and_how_many_excused() -> None:
    from kafkatest.oracles.report import Comparison

    one, split = judged(
        late_in(SPLIT, 1),
        [window_row("ann", "2024-05-01T10:00:00Z", "2024-05-01T10:01:00Z", 2, 15.25)],
        [window_row("ann", "2024-05-01T10:00:00Z", "2024-05-01T10:01:00Z", 1, 10.0)],
    )
    comparison = Comparison(
        ONE,
        SPLIT,
        "forbid",
        9,
        one,
        split,
        list(late_in(SPLIT, 1).values()),
        allow_late=True,
        rows_baseline=10,
        rows_other=10,
    )
    assert comparison.ok
    verdict = comparison.verdict()
    assert "all 2 explained by 1 records the watermark made late" in verdict
    assert "8 of 10 rows held to equality, 2 excused" in verdict
    assert "excused: 'maxOffsetsPerTrigger=1' lacks #1" in "\n".join(comparison.lines())


def test_a_replay_drops_one_copy_of_each_row_it_wrote_again() -> None:
    """A replayed first attempt is dropped only while the run holds another equal row
    (`a` three times: two copies go; `b` once: it stays, to be reported)."""
    from kafkatest.oracles.engine import _without_replays

    a, b, c = {"id": "a"}, {"id": "b"}, {"id": "c"}
    rows, dropped = _without_replays([a, b, a, c, a], [a, b, a, a])
    assert (rows, dropped) == ([b, c, a], 2)


def test_the_inputs_behind_a_row_share_its_key_and_fall_in_its_window() -> None:
    tracer = Tracer(INPUTS, "ts", None)
    row = window_row("ann", "2024-05-01T10:00:00Z", "2024-05-01T10:05:00Z", 3, 17.25)
    indexes, how = tracer.related(row)
    assert indexes == [0, 1, 2]  # not bob's click (3), not ann's at 10:06 (4)
    assert how.startswith("same key, user and event time in [2024-05-01T10:00:00")
    assert Tracer(INPUTS, None, None).related(row)[0] == []  # no event time: in no window
