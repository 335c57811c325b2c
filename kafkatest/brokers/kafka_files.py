"""Reading what a `kafka` backend node writes to its work directory.

Compaction faults wait on the real broker's progress, which Kafka shows only on
disk (cleaner checkpoints, segment files, its log), so these readers are the
`kafka` backend's side of `faults.compaction`. Each tolerates a file that is
missing or being rewritten: the broker writes them while tests read.
"""

from __future__ import annotations

from pathlib import Path


def cleaner_checkpoints(data_dir: Path) -> dict[tuple[str, int], int]:
    """(topic, partition) -> where the log cleaner's next pass starts, from the
    broker's `cleaner-offset-checkpoint` file (written after every pass)."""
    path = data_dir / "cleaner-offset-checkpoint"
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return {}
    out: dict[tuple[str, int], int] = {}
    for line in lines[2:]:  # version, count, then "topic partition offset"
        parts = line.split()
        if len(parts) == 3:
            out[(parts[0], int(parts[1]))] = int(parts[2])
    return out


def segment_bases(data_dir: Path, topic: str, partition: int) -> list[int]:
    """Base offsets of the partition's log segments, from its segment files."""
    directory = data_dir / f"{topic}-{partition}"
    return sorted(int(p.stem) for p in directory.glob("*.log") if p.stem.isdigit())


def text_since(path: Path, since: int) -> str:
    """The file's text from byte `since`; "" if it cannot be read."""
    try:
        with path.open("rb") as log:
            log.seek(since)
            return log.read().decode(errors="replace")
    except OSError:
        return ""


def size_of(path: Path) -> int:
    """The file's size in bytes; 0 if it cannot be read."""
    try:
        return path.stat().st_size
    except OSError:
        return 0
