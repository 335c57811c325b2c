"""`replay_report` names the batches a restart ran again and the offsets nobody read, from
the delivered offsets and the restarted query's progress (shaped as Spark reports it)."""

from __future__ import annotations

import json

from kafkatest.checkpoints import replay_report


def _progress(batch: int, start: dict[str, int] | None, end: dict[str, int]) -> dict[str, object]:
    def offsets(values: dict[str, int] | None) -> str | None:
        return json.dumps({"in": values}) if values is not None else None

    return {
        "batchId": batch,
        "sources": [{"startOffset": offsets(start), "endOffset": offsets(end)}],
    }


def test_a_batch_read_below_the_delivered_offsets_is_a_replay() -> None:
    report = replay_report(
        {("in", 0): 9, ("in", 1): 4},
        [_progress(2, {"0": 6, "1": 4}, {"0": 9, "1": 4}), _progress(3, {"0": 9}, {"0": 12})],
        "crash-before-commit",
    )
    assert report.replayed_batches == [2]
    assert report.replayed_records == 3
    assert report.skipped == {}
    assert "batch 2 read in[0] offsets 6-8; replayed in[0] offsets 6-8 (3 records)" in str(report)


def test_a_restart_beyond_the_delivered_offsets_skips_the_gap() -> None:
    report = replay_report({("in", 0): 9}, [_progress(0, {"0": 15}, {"0": 18})], "delete-metadata")
    assert report.skipped == {("in", 0): (9, 15)}
    assert report.skipped_records == 6
    assert "skipped in[0] offsets 9-14 (6 records never read)" in str(report)


def test_no_batch_is_said_plainly() -> None:
    assert "ran no batch" in str(replay_report({("in", 0): 9}, [], "garbage-offsets"))
