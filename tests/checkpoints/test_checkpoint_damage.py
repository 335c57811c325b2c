"""The checkpoint faults' file operations on a checkpoint laid out as Spark writes one
(without Spark: what each fault removes or changes, and its errors for bad input)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkatest.checkpoints import (
    CheckpointFaultError,
    apply_checkpoint_fault,
    crash_before_commit,
    damage_checkpoint,
    restore_checkpoint,
    rewind_checkpoint,
    snapshot_checkpoint,
)

OFFSETS = 'v1\n{"batchWatermarkMs":0,"batchTimestampMs":1}\n{"in":{"0":%d}}\n'


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.with_name(f".{path.name}.crc").write_bytes(b"crc")


@pytest.fixture
def checkpoint(tmp_path: Path) -> Path:
    """Batches 0-2 planned and committed, one source, two state partitions (HDFS deltas)."""
    root = tmp_path / "checkpoint"
    _write(root / "metadata", '{"id":"5d1c"}')
    _write(root / "sources" / "0" / "0", 'v1\n{"in":{"0":0}}')
    for batch in range(3):
        _write(root / "offsets" / str(batch), OFFSETS % (3 * batch + 3))
        _write(root / "commits" / str(batch), 'v1\n{"nextBatchWatermarkMs":0}')
        for partition in (0, 1):
            _write(root / "state" / "0" / str(partition) / f"{batch + 1}.delta", "delta")
    return root


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_deleting_the_latest_commit_removes_it_and_its_checksum(checkpoint: Path) -> None:
    damage = damage_checkpoint(checkpoint, "commits", "delete")
    assert damage.removed == ("commits/2", "commits/.2.crc")
    assert damage.batches == (2,)
    assert (checkpoint / "commits" / "1").exists()


def test_truncation_keeps_half_and_garbage_the_length(checkpoint: Path) -> None:
    before = (checkpoint / "offsets" / "2").read_bytes()
    damage_checkpoint(checkpoint, "offsets", "truncate")
    assert (checkpoint / "offsets" / "2").read_bytes() == before[: len(before) // 2]
    assert not (checkpoint / "offsets" / ".2.crc").exists()

    metadata = (checkpoint / "metadata").read_bytes()
    damage = damage_checkpoint(checkpoint, "metadata", "garbage", keep_checksum=True)
    garbled = (checkpoint / "metadata").read_bytes()
    assert len(garbled) == len(metadata) and garbled != metadata
    assert damage.changed == ("metadata",) and damage.removed == ()
    assert (checkpoint / ".metadata.crc").exists()


def test_state_faults_take_the_newest_version_of_the_first_partition(checkpoint: Path) -> None:
    damage = apply_checkpoint_fault(checkpoint, "delete-state-delta")
    assert damage.removed[0] == "state/0/0/3.delta"
    assert (checkpoint / "state" / "0" / "1" / "3.delta").exists()


def test_a_missing_part_says_why(checkpoint: Path, tmp_path: Path) -> None:
    with pytest.raises(CheckpointFaultError, match="RocksDB"):
        damage_checkpoint(checkpoint, "state-snapshot", "delete")
    with pytest.raises(CheckpointFaultError, match="not a streaming checkpoint"):
        damage_checkpoint(tmp_path / "elsewhere", "offsets", "delete")
    with pytest.raises(CheckpointFaultError, match="unknown checkpoint fault 'drop-all'"):
        apply_checkpoint_fault(checkpoint, "drop-all")
    with pytest.raises(CheckpointFaultError, match="unknown damage"):
        damage_checkpoint(checkpoint, "offsets", "shred")
    before = _files(checkpoint)
    with pytest.raises(CheckpointFaultError, match="committed batches are \\[0, 1, 2\\]"):
        rewind_checkpoint(checkpoint, 7)
    assert _files(checkpoint) == before  # a refused fault changes nothing


def test_rewinding_takes_back_the_logs_and_state_written_since(checkpoint: Path) -> None:
    damage = apply_checkpoint_fault(checkpoint, "rewind-to-0")
    assert damage.batches == (1, 2)
    assert sorted(p.name for p in (checkpoint / "offsets").iterdir()) == [".0.crc", "0"]
    assert sorted(p.name for p in (checkpoint / "commits").iterdir()) == [".0.crc", "0"]
    assert sorted(p.name for p in (checkpoint / "state" / "0" / "1").iterdir()) == [
        ".1.delta.crc",
        "1.delta",
    ]


def test_a_backup_restored_takes_back_the_batches_run_since(
    checkpoint: Path, tmp_path: Path
) -> None:
    backup = snapshot_checkpoint(checkpoint, tmp_path / "backup")
    saved = _files(checkpoint)
    _write(checkpoint / "offsets" / "3", OFFSETS % 12)
    _write(checkpoint / "commits" / "3", "v1\n{}")
    damage = restore_checkpoint(backup, checkpoint)
    assert _files(checkpoint) == saved
    assert damage.batches == (3,)
    assert "as after batch 2" in str(damage)
    with pytest.raises(CheckpointFaultError, match="exists"):
        snapshot_checkpoint(checkpoint, backup)


def test_crash_before_commit_leaves_the_offsets_log_one_batch_ahead(checkpoint: Path) -> None:
    damage = crash_before_commit(checkpoint)
    assert damage.fault == "crash-before-commit" and damage.batches == (2,)
    assert (checkpoint / "offsets" / "2").exists() and not (checkpoint / "commits" / "2").exists()
