"""What a streaming query's checkpoint says about its micro-batches.

The checkpoint is the one record of progress that survives a killed driver: Spark
writes ``offsets/N`` (the planned end offsets of batch N) before running the batch
and ``commits/N`` after the sink accepted it. A batch with an offsets file and no
commit is exactly the window in which a crash leaves duplicates behind.
"""

from __future__ import annotations

import json
from pathlib import Path

#: End offsets by (topic, partition), as the Kafka source's offset JSON gives them.
TopicOffsets = dict[tuple[str, int], int]


def _batch_ids(folder: Path) -> list[int]:
    if not folder.is_dir():
        return []
    return sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit())


def planned_batches(checkpoint: str | Path) -> list[int]:
    """Batch ids whose end offsets were written (``offsets/N``)."""
    return _batch_ids(Path(checkpoint) / "offsets")


def committed_batches(checkpoint: str | Path) -> list[int]:
    """Batch ids whose sink write finished (``commits/N``)."""
    return _batch_ids(Path(checkpoint) / "commits")


def planned_offsets(checkpoint: str | Path, batch_id: int) -> TopicOffsets:
    """End offsets of batch `batch_id` over every Kafka source of the query.

    The file holds a version line, the batch metadata, then one JSON line per
    source; a line that is still being written is ignored.
    """
    path = Path(checkpoint) / "offsets" / str(batch_id)
    offsets: TopicOffsets = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return offsets
    for line in lines[2:]:
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            offsets.update(parse_source_offsets(data))
    return offsets


def parse_source_offsets(data: dict[str, object]) -> TopicOffsets:
    """``{"topic": {"0": 5}}`` (Kafka source offset JSON) as ``{(topic, 0): 5}``."""
    out: TopicOffsets = {}
    for topic, partitions in data.items():
        if isinstance(partitions, dict):
            for partition, offset in partitions.items():
                out[(topic, int(partition))] = int(offset)
    return out


def uncommitted_batch(checkpoint: str | Path) -> int | None:
    """The newest planned batch without a commit, or None when all are committed."""
    planned = planned_batches(checkpoint)
    if not planned:
        return None
    newest = planned[-1]
    return None if newest in set(committed_batches(checkpoint)) else newest
