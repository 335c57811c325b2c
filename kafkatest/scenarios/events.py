"""What a trigger sees of a running job: its finished micro-batches.

Events come from two places that must look the same to a trigger: the progress
Spark reports to a `StreamingQueryListener` (a job in this process) and the
checkpoint directory (a job in another process, which may be killed).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from kafkatest.checkpoints.logs import TopicOffsets


@dataclass(frozen=True)
class BatchEvent:
    """A micro-batch Spark finished (or, from a checkpoint, planned and maybe finished)."""

    batch_id: int
    end_offsets: TopicOffsets
    committed: bool = True
    at: float = field(default_factory=time.monotonic)


def progress_event(progress: Any) -> BatchEvent:
    """A `StreamingQueryProgress` (or its JSON dict) as a BatchEvent."""
    if isinstance(progress, str):
        progress = json.loads(progress)
    if isinstance(progress, dict):
        batch_id = int(progress["batchId"])
        sources = [s.get("endOffset") for s in progress.get("sources", [])]
    else:
        batch_id = int(progress.batchId)
        sources = [s.endOffset for s in progress.sources]
    offsets: TopicOffsets = {}
    for raw in sources:
        data = json.loads(raw) if isinstance(raw, str) else raw
        if not isinstance(data, dict):
            continue
        for topic, partitions in data.items():
            if isinstance(partitions, dict):
                for partition, offset in partitions.items():
                    offsets[(topic, int(partition))] = int(offset)
    return BatchEvent(batch_id, offsets)


def offsets_text(offsets: TopicOffsets) -> str:
    """``topic[0]=5, topic[1]=3``: how reports print offsets."""
    return ", ".join(f"{t}[{p}]={o}" for (t, p), o in sorted(offsets.items())) or "(none)"
