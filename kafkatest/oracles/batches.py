"""How many micro-batches a run will have, worked out before it runs.

A stop such as ``after_batch:1`` is reached only if the job runs batch 2 at all, and
how many batches a backlog becomes depends on Spark's rate limit, not only on
``maxOffsetsPerTrigger``: the Kafka source shares the limit among the partitions in
proportion to their backlog, and gives a partition with data at least one record per
batch (KafkaMicroBatchStream.rateLimit). Six records over three partitions are two
batches even at a limit of 1. The oracles plan with the same arithmetic, so that they
choose a limit (and partitions) that reaches their stops, or refuse before running.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

#: Data batches a combined run aims at: enough to split the input several ways and to
#: hold the default stops, few enough to keep the oracles' cost a small multiple of
#: one run.
TARGET_BATCHES = 3


def batch_ends(sizes: Mapping[int, int], limit: int | None) -> list[dict[int, int]]:
    """The end offset of every partition after each data batch, for a backlog of
    `sizes[p]` records from offset 0 read under ``maxOffsetsPerTrigger=limit``.

    AvailableNow fixes the backlog when the query starts, as here.
    """
    ends = {p: n for p, n in sizes.items() if n > 0}
    position = dict.fromkeys(ends, 0)
    batches: list[dict[int, int]] = []
    while any(position[p] < ends[p] for p in ends):
        if limit is None:
            position = dict(ends)
        else:
            backlog = {p: ends[p] - position[p] for p in ends if ends[p] > position[p]}
            total = float(sum(backlog.values()))
            for p, size in backlog.items():
                share = limit * (size / total)
                step = math.ceil(share) if share < 1 else math.floor(share)
                position[p] = min(ends[p], position[p] + step)
        batches.append(dict(position))
    return batches


def needed_batches(stops: Sequence[tuple[str, int]]) -> int:
    """Data batches a run must have to reach each ``(kind, n)`` stop: batch n+1 planned
    for a clean stop after batch n, batch n itself for a crash before its commit."""
    return max(
        (batch + 2 if kind == "after_batch" else batch + 1 for kind, batch in stops), default=0
    )


def limit_for(sizes: Mapping[int, int], batches: int) -> int | None:
    """The largest ``maxOffsetsPerTrigger`` that gives at least `batches` data batches
    (the fewest batches, the cheapest run), or None when no limit does."""
    total = sum(sizes.values())
    if batches <= 1:
        return total or None
    # A limit above total / (batches - 1) leaves fewer batches; below it, try each
    # downwards (a batch count is not monotone in the limit in every case, so no
    # bisection), each try a few batches long.
    downwards = range(max(1, -(-total // (batches - 1))), 0, -1)
    return next((limit for limit in downwards if len(batch_ends(sizes, limit)) >= batches), None)


def most_batches(sizes: Mapping[int, int]) -> int:
    """The most data batches any limit gives: one record per partition per batch."""
    return max((n for n in sizes.values() if n > 0), default=0)
