"""Damage one file of a stopped query's checkpoint: delete it, truncate it, or fill it
with garbage.

What a restarted query does next depends on which file and how (docs/how-to/checkpoint-faults.md).
Hadoop's ``.crc`` file beside a damaged file is removed by default, because production
checkpoints mostly live on object stores (S3, ABFS, GCS) that keep no such file: Spark
then parses the damaged bytes. ``keep_checksum=True`` leaves it, as on a local disk or
HDFS, where Spark's read fails its checksum first.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from kafkatest.checkpoints.layout import (
    CheckpointFaultError,
    checksum_of,
    target_file,
)

#: Ways to damage a file.
HOWS = ("delete", "truncate", "garbage")


@dataclass(frozen=True)
class Damage:
    """What a checkpoint fault changed, for a report to explain the restart that follows."""

    fault: str
    checkpoint: Path
    #: Files removed, relative to the checkpoint.
    removed: tuple[str, ...] = ()
    #: Files whose bytes were changed, relative to the checkpoint.
    changed: tuple[str, ...] = ()
    #: Batches the fault concerns (the damaged log entry's id; those a rewind took back).
    batches: tuple[int, ...] = ()
    detail: str = field(default="", compare=False)

    def __str__(self) -> str:
        parts = [self.fault]
        if self.removed:
            parts.append(f"removed {', '.join(self.removed)}")
        if self.changed:
            parts.append(f"changed {', '.join(self.changed)}")
        if self.detail:
            parts.append(self.detail)
        return "; ".join(parts)


def damage_checkpoint(
    checkpoint: str | os.PathLike[str],
    target: str,
    how: str,
    *,
    keep_checksum: bool = False,
) -> Damage:
    """Delete, truncate or garble one part of a stopped query's checkpoint.

    `target` is ``offsets`` or ``commits`` (the latest batch's file), ``metadata``,
    ``sources`` (the first source's initial offsets), ``state-delta`` or
    ``state-snapshot`` (the newest state store file of that kind). Truncation keeps the
    first half of the file (a write cut short); garbage replaces its bytes with the
    same number of bytes that parse as nothing.
    """
    if how not in HOWS:
        raise CheckpointFaultError(f"unknown damage {how!r}: one of {', '.join(HOWS)}")
    root = Path(checkpoint)
    path = target_file(root, target)
    checksum = checksum_of(path)
    removed: list[Path] = []
    changed: list[Path] = []
    if how == "delete":
        path.unlink()
        removed.append(path)
    else:
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2] if how == "truncate" else _garbage(len(data)))
        changed.append(path)
    if (how == "delete" or not keep_checksum) and checksum.exists():
        checksum.unlink()
        removed.append(checksum)
    batch = int(path.stem) if path.stem.isdigit() and target != "sources" else None
    return Damage(
        fault=f"{how}-{target}",
        checkpoint=root,
        removed=tuple(_relative(root, p) for p in removed),
        changed=tuple(_relative(root, p) for p in changed),
        batches=(batch,) if batch is not None and target in ("offsets", "commits") else (),
    )


def _garbage(size: int) -> bytes:
    """`size` bytes that are neither JSON nor a version line, the same on every run."""
    block = b"\x00\xff" + hashlib.sha256(b"kafkatest checkpoint garbage").digest()
    return (block * (size // len(block) + 1))[: max(size, 1)]


def _relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()
