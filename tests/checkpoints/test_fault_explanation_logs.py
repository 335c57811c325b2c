"""`record_checkpoint_fault` reads a checkpoint's offsets and commit logs before and
after a fault; `explain` sets the logs after the restart against them. These tests
write the logs as Spark does (a version line, the batch metadata, one JSON line per
source) and play the restart's part by hand, so each case is exact and fast."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kafkatest.assertions import DeliveryAssertionError, assert_exactly_once, delivery_report
from kafkatest.checkpoints import (
    Damage,
    LogSnapshot,
    record_checkpoint_fault,
    restore_checkpoint,
    snapshot_checkpoint,
)
from kafkatest.records import Record

TOPIC = "in"


def _batch(checkpoint: Path, batch: int, end: int, *, commit: bool = True) -> None:
    offsets = checkpoint / "offsets"
    offsets.mkdir(parents=True, exist_ok=True)
    meta = {"batchWatermarkMs": 0, "batchTimestampMs": 0, "conf": {}}
    (offsets / str(batch)).write_text(f"v1\n{json.dumps(meta)}\n{json.dumps({TOPIC: {'0': end}})}")
    if commit:
        (checkpoint / "commits").mkdir(exist_ok=True)
        (checkpoint / "commits" / str(batch)).write_text('v1\n{"nextBatchWatermarkMs":0}')


def _checkpoint(tmp_path: Path, ends: list[int]) -> Path:
    """A checkpoint whose batches 0.. ended at `ends` (from offset 0), all committed."""
    root = tmp_path / "checkpoint"
    (root / "sources" / "0").mkdir(parents=True)
    (root / "sources" / "0" / "0").write_bytes(b"\x00v1\n" + json.dumps({TOPIC: {"0": 0}}).encode())
    (root / "metadata").write_text('{"id":"q"}')
    for batch, end in enumerate(ends):
        _batch(root, batch, end)
    return root


def _records(offsets: list[int]) -> list[Record]:
    return [
        Record(topic=TOPIC, partition=0, offset=o, value=json.dumps({"id": o}).encode())
        for o in offsets
    ]


def _rows(offsets: list[int]) -> list[dict[str, object]]:
    return [{"value": {"id": o}} for o in offsets]


def test_a_replayed_batch_is_named_with_the_records_it_wrote_twice(tmp_path: Path) -> None:
    checkpoint = _checkpoint(tmp_path, [3, 6, 9])
    recorded = record_checkpoint_fault(checkpoint, "crash-before-commit")
    _batch(checkpoint, 2, 9)  # the restart runs batch 2 again, then batch 3
    _batch(checkpoint, 3, 12)

    explanation = recorded.explain()
    assert explanation.replayed_batches == [2]
    assert explanation.new_batches == [3]
    assert explanation.records_again == 3
    with pytest.raises(DeliveryAssertionError) as failed:
        assert_exactly_once(
            _records(list(range(12))),
            _rows([*range(9), 6, 7, 8, 9, 10, 11]),
            on="value.id",
            explain=explanation,
        )
    message = str(failed.value)
    assert (
        "records 6-8 of in[0] were written twice: batch 2 was replayed after commits/2 was "
        "deleted (crash-before-commit)"
    ) in message
    assert (
        "logs before the fault: offsets 0-2, commits 0-2; after it: offsets 0-2, commits 0-1"
        in message
    )
    assert (
        "batch 2 (replayed) read in[0] offsets 6-8; in[0] offsets 6-8 had reached the sink"
        in message
    )
    assert "batch 3 (new) read in[0] offsets 9-11" in message


def test_a_rewind_replays_every_batch_after_it(tmp_path: Path) -> None:
    checkpoint = _checkpoint(tmp_path, [3, 6, 9])
    recorded = record_checkpoint_fault(checkpoint, "rewind-to-0")
    for batch, end in ((1, 6), (2, 9), (3, 12)):
        _batch(checkpoint, batch, end)

    explanation = recorded.explain()
    assert explanation.replayed_batches == [1, 2]
    report = delivery_report(
        _records(list(range(12))),
        _rows([*range(9), *range(3, 12)]),
        on="value.id",
        explain=explanation,
    )
    assert report.explanation[0] == (
        "records 3-8 of in[0] were written twice: records 3-5: batch 1 was replayed after the "
        "checkpoint was rewound to batch 0; records 6-8: batch 2 was replayed after the "
        "checkpoint was rewound to batch 0"
    )


def _lose_logs(checkpoint: Path) -> Damage:
    """A volume restored without its logs: the query starts over, here from the latest
    offsets (``startingOffsets=latest``), and nothing says where it had got to."""
    for folder in ("offsets", "commits", "sources"):
        shutil.rmtree(checkpoint / folder)
    return Damage("lose-logs", checkpoint, removed=("offsets/", "commits/", "sources/"))


def test_a_batch_planned_anew_past_the_delivered_offsets_is_a_loss(tmp_path: Path) -> None:
    checkpoint = _checkpoint(tmp_path, [3, 6])
    recorded = record_checkpoint_fault(checkpoint, _lose_logs)
    (checkpoint / "sources" / "0").mkdir(parents=True)
    (checkpoint / "sources" / "0" / "0").write_text("v1\n" + json.dumps({TOPIC: {"0": 9}}))
    _batch(checkpoint, 0, 12)

    explanation = recorded.explain()
    assert explanation.new_batches == [] and explanation.replayed_batches == [0]
    assert explanation.runs[0].kind == "re-planned"
    assert explanation.skipped == {(TOPIC, 0): (6, 9)}
    assert explanation.skipped_records == 3
    report = delivery_report(
        _records(list(range(12))),
        _rows([*range(6), 9, 10, 11]),
        on="value.id",
        explain=explanation,
    )
    assert report.explanation[0] == (
        "records 6-8 of in[0] were never written: no batch read offsets 6-8 after "
        "lose-logs (the restarted query began at offset 9)"
    )


def test_a_backup_restored_replays_the_batches_since(tmp_path: Path) -> None:
    checkpoint = _checkpoint(tmp_path, [3, 6, 9])
    backup = snapshot_checkpoint(checkpoint, tmp_path / "backup")
    _batch(checkpoint, 3, 12)
    recorded = record_checkpoint_fault(checkpoint, lambda cp: restore_checkpoint(backup, cp))
    _batch(checkpoint, 3, 12)

    explanation = recorded.explain()
    assert explanation.replayed_batches == [3]
    assert explanation.runs[0].cause == (
        f"the checkpoint was restored from {backup}, as after batch 2"
    )


def test_without_an_explanation_the_report_says_no_why(tmp_path: Path) -> None:
    report = delivery_report(_records([0, 1]), _rows([0, 1, 1]), on="value.id")
    assert report.explanation == []
    assert "why:" not in report.message()


def test_each_batch_starts_where_the_batch_planned_before_it_ended(tmp_path: Path) -> None:
    """Batch 0 at the initial offsets; after a gap in the log (an entry Spark purged or a
    fault deleted), where the last batch before the gap ended."""
    checkpoint = _checkpoint(tmp_path, [3, 6, 9, 12])
    (checkpoint / "offsets" / "2").unlink()
    starts = {b: e.start for b, e in LogSnapshot.read(checkpoint).entries.items()}
    assert starts == {0: {(TOPIC, 0): 0}, 1: {(TOPIC, 0): 3}, 3: {(TOPIC, 0): 6}}
    (checkpoint / "offsets" / "0").unlink()
    assert LogSnapshot.read(checkpoint).entries[1].read() == {(TOPIC, 0): (0, 6)}
