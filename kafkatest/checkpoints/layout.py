"""Where a stopped streaming query keeps each part of its checkpoint.

Faults name a part ("the latest offsets file", "the newest state delta") rather than a
path, because the path depends on how far the query got: the latest batch id, the
state store's newest version, which provider wrote it. These functions find it.
"""

from __future__ import annotations

from pathlib import Path

from kafkatest.checkpoints.logs import committed_batches, planned_batches
from kafkatest.errors import KafkaTestError

#: Parts of a checkpoint a fault can damage.
TARGETS = ("offsets", "commits", "metadata", "sources", "state-delta", "state-snapshot")
#: State store files by part: HDFS-backed deltas; HDFS-backed snapshots and RocksDB's zips.
STATE_SUFFIXES = {"state-delta": (".delta",), "state-snapshot": (".snapshot", ".zip")}


class CheckpointFaultError(KafkaTestError):
    """A checkpoint fault could not be applied (no such checkpoint or part)."""


def checksum_of(path: Path) -> Path:
    """Hadoop's checksum file beside `path` (``.name.crc``), written on local disks and HDFS."""
    return path.with_name(f".{path.name}.crc")


def batch_ids(checkpoint: Path, log: str) -> list[int]:
    """Batch ids with a file in the checkpoint's `log` folder (``offsets`` or ``commits``)."""
    return planned_batches(checkpoint) if log == "offsets" else committed_batches(checkpoint)


def require_checkpoint(checkpoint: Path) -> Path:
    """`checkpoint`, if it is a query's checkpoint directory; a clear error if not."""
    if not (checkpoint / "offsets").is_dir() and not (checkpoint / "metadata").is_file():
        raise CheckpointFaultError(
            f"{checkpoint} is not a streaming checkpoint (no metadata file, no offsets/): "
            "give the checkpointLocation of a query that has run at least one batch"
        )
    return checkpoint


def latest_log_file(checkpoint: Path, log: str) -> Path:
    """The newest ``offsets/N`` or ``commits/N``."""
    ids = batch_ids(checkpoint, log)
    if not ids:
        raise CheckpointFaultError(
            f"{checkpoint / log} holds no batch file: the query has not "
            f"{'planned' if log == 'offsets' else 'committed'} a batch yet"
        )
    return checkpoint / log / str(ids[-1])


def source_entries(checkpoint: Path) -> list[Path]:
    """Each source's initial offsets (``sources/<n>/0``), first source first."""
    folder = checkpoint / "sources"
    if not folder.is_dir():
        return []
    found = (entry / "0" for entry in folder.iterdir() if entry.name.isdigit())
    return sorted((f for f in found if f.is_file()), key=lambda f: int(f.parent.name))


def state_files(checkpoint: Path, target: str) -> list[Path]:
    """The state store's files of one kind, newest version first, then by operator and
    partition (``state/<operator>/<partition>/<version>.<kind>``)."""
    suffixes = STATE_SUFFIXES[target]
    found = [
        path
        for path in (checkpoint / "state").glob("*/*/*")
        if path.suffix in suffixes and path.stem.isdigit() and path.is_file()
    ]
    return sorted(found, key=lambda p: (-int(p.stem), p.parent.parent.name, int(p.parent.name)))


def target_file(checkpoint: Path, target: str) -> Path:
    """The one file a fault on `target` damages."""
    require_checkpoint(checkpoint)
    if target in ("offsets", "commits"):
        return latest_log_file(checkpoint, target)
    if target == "metadata":
        path = checkpoint / "metadata"
        if not path.is_file():
            raise CheckpointFaultError(f"{checkpoint} has no metadata file (already removed?)")
        return path
    if target == "sources":
        entries = source_entries(checkpoint)
        if not entries:
            raise CheckpointFaultError(f"{checkpoint} has no sources/<n>/0 entry")
        return entries[0]
    if target in STATE_SUFFIXES:
        files = state_files(checkpoint, target)
        if not files:
            raise CheckpointFaultError(_no_state_files(checkpoint, target))
        return files[0]
    raise CheckpointFaultError(f"unknown checkpoint part {target!r}: one of {', '.join(TARGETS)}")


def _no_state_files(checkpoint: Path, target: str) -> str:
    if not (checkpoint / "state").is_dir():
        return f"{checkpoint} has no state/ folder: the query has no stateful operator"
    if target == "state-snapshot":
        return (
            f"{checkpoint}/state holds no snapshot: the HDFS-backed store writes one only in "
            "its background maintenance (every 10 deltas by default); RocksDB's store "
            "(spark.sql.streaming.stateStore.providerClass) writes a <version>.zip per commit"
        )
    return f"{checkpoint}/state holds no .delta file (RocksDB's store writes none)"
