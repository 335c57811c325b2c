"""The corpus's inputs as streams for the bounded-state column: batch i is a shape's
records again, twenty minutes of event time later, with ids of its own.

Twenty minutes is longer than any shape's input spans (at most 18 minutes) and a
multiple of every window and slide (2, 4 and 5 minutes), so each batch is the one
before moved on, aligned alike on the windows: a job whose watermark bounds its state
holds the same rows from the second or third batch on. The keys a shape groups by
(users, devices, words) stay the same; the ids a dedup or a join keeps are new.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Sequence
from typing import Any

STEP = dt.timedelta(minutes=20)
#: Kafka timestamps of a shape whose job reads them: four hours ago, so that eight
#: batches twenty minutes apart stay in the past (Kafka 4 refuses a timestamp more than
#: an hour ahead) and well inside retention.
_HOURS_AGO_MS = (time.time_ns() // 1_000_000 // 3_600_000 - 4) * 3_600_000
_MS = dt.timedelta(milliseconds=1)
Stream = Callable[[int], list[dict[str, Any]]]


def _later(ts: str, batch: int) -> str:
    moved = dt.datetime.fromisoformat(ts.replace("Z", "+00:00")) + batch * STEP
    return moved.strftime("%Y-%m-%dT%H:%M:%SZ")


def moved(
    records: Sequence[dict[str, Any]],
    ids: Callable[[dict[str, Any], int], dict[str, Any]],
    *,
    arrival_base_ms: int | None = None,
) -> Stream:
    """A stream whose batch i is `records` with event time ("ts") moved i steps on and
    `ids(value, i)` merged into each value. With `arrival_base_ms` (what the records'
    Kafka timestamps count from) the timestamps move with it, from four hours ago."""

    def batch(i: int) -> list[dict[str, Any]]:
        out = []
        for record in records:
            value = dict(record["value"])
            value.update(ids(value, i), ts=_later(value["ts"], i))
            item = {**record, "value": value}
            if arrival_base_ms is not None:
                since = record["timestamp_ms"] - arrival_base_ms + i * STEP // _MS
                item["timestamp_ms"] = _HOURS_AGO_MS + since
            out.append(item)
        return out

    return batch


def event_ids(value: dict[str, Any], i: int) -> dict[str, Any]:
    return {"event_id": f"{value['event_id']}-{i}"}


def order_ids(value: dict[str, Any], i: int) -> dict[str, Any]:
    return {"order_id": f"{value['order_id']}-{i}"}


def sequence(value: dict[str, Any], i: int) -> dict[str, Any]:
    return {"seq": value["seq"] + 100 * i}


def same(records: Sequence[dict[str, Any]]) -> Stream:
    """The same records every batch (lines of text: the words are the keys)."""
    return lambda _i: [dict(record) for record in records]
