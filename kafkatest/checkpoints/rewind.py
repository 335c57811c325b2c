"""Put a stopped query's checkpoint back to an earlier batch: from a copy taken then (a
backup), or by taking back the log entries and state versions written since.

Either way the restarted query runs the batches after n again with the offsets its log
planned for them, so a sink that is not idempotent writes them twice; the state store
goes back with the logs (state version v is the state after batch v - 1).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from kafkatest.checkpoints.damage import Damage, damage_checkpoint
from kafkatest.checkpoints.layout import (
    STATE_SUFFIXES,
    CheckpointFaultError,
    batch_ids,
    checksum_of,
    require_checkpoint,
)

#: State store files that belong to one version (HDFS deltas and snapshots, RocksDB's
#: zips and changelogs).
_VERSIONED = (*STATE_SUFFIXES["state-delta"], *STATE_SUFFIXES["state-snapshot"], ".changelog")


def snapshot_checkpoint(checkpoint: str | os.PathLike[str], backup: str | os.PathLike[str]) -> Path:
    """Copy a stopped query's checkpoint to `backup` (which must not exist yet), as a
    nightly backup would; `restore_checkpoint` puts it back."""
    source = require_checkpoint(Path(checkpoint))
    target = Path(backup)
    if target.exists():
        raise CheckpointFaultError(f"{target} exists: a backup goes to a new directory")
    shutil.copytree(source, target)
    return target


def restore_checkpoint(
    backup: str | os.PathLike[str], checkpoint: str | os.PathLike[str]
) -> Damage:
    """Replace `checkpoint` with the copy `snapshot_checkpoint` made (a restore from backup)."""
    saved = require_checkpoint(Path(backup))
    root = Path(checkpoint)
    newer = [b for b in batch_ids(root, "offsets") if b not in set(batch_ids(saved, "offsets"))]
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(saved, root)
    last = batch_ids(saved, "commits")
    return Damage(
        fault="restore-backup",
        checkpoint=root,
        batches=tuple(newer),
        detail=f"restored from {saved}, as after batch {last[-1] if last else 'none'}",
    )


def rewind_checkpoint(checkpoint: str | os.PathLike[str], batch: int) -> Damage:
    """Make the checkpoint what it was right after batch `batch` committed: the offsets
    and commit log entries after it and the state versions after ``batch + 1`` go."""
    root = require_checkpoint(Path(checkpoint))
    committed = batch_ids(root, "commits")
    if batch not in committed:
        raise CheckpointFaultError(
            f"cannot rewind {root} to batch {batch}: its committed batches are "
            f"{committed or 'none'}"
        )
    removed: list[Path] = []
    for log in ("offsets", "commits"):
        removed += [root / log / str(b) for b in batch_ids(root, log) if b > batch]
    removed += [
        path
        for path in (root / "state").glob("*/*/*")
        if path.suffix in _VERSIONED and path.stem.isdigit() and int(path.stem) > batch + 1
    ]
    for path in removed:
        path.unlink()
        checksum_of(path).unlink(missing_ok=True)
    taken = [b for b in batch_ids_of(removed, root) if b > batch]
    return Damage(
        fault=f"rewind-to-{batch}",
        checkpoint=root,
        removed=tuple(sorted(p.relative_to(root).as_posix() for p in removed)),
        batches=tuple(taken),
        detail=f"as after batch {batch}",
    )


def crash_before_commit(checkpoint: str | os.PathLike[str]) -> Damage:
    """The state a driver killed between a batch's sink write and its commit leaves: the
    latest ``commits/N`` goes, so the offsets log is one batch ahead of the commit log
    and the restarted query runs batch N again."""
    damage = damage_checkpoint(checkpoint, "commits", "delete")
    return Damage(
        fault="crash-before-commit",
        checkpoint=damage.checkpoint,
        removed=damage.removed,
        batches=damage.batches,
    )


def batch_ids_of(paths: list[Path], root: Path) -> list[int]:
    """The batch ids of the offsets log files among `paths`."""
    return sorted(int(p.name) for p in paths if p.parent == root / "offsets")
