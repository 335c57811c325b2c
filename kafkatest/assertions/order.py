"""Per-key order: the records of one key must reach the sink in seeded order.

Only each record's first copy counts, so a restarted query that replays a batch
(a, b, a, b) is not flagged; a record that overtakes an earlier one of its key
(b before a) is.
"""

from __future__ import annotations

from typing import Any

from kafkatest.assertions.analysis import Analysis, Sighting
from kafkatest.assertions.report import Entry
from kafkatest.assertions.rows import ExpectedRow, Identity, as_text, display_id, display_row
from kafkatest.sinks.decode import lookup


def order_violations(analysis: Analysis, key: str | None, order_by: str | None) -> list[Entry]:
    """Records that arrived after a record of the same key seeded later than them."""
    rank: dict[Identity, int] = {}
    item_of: dict[Identity, ExpectedRow] = {}
    for index, item in enumerate(analysis.expected):
        rank.setdefault(item.identity, index)
        item_of.setdefault(item.identity, item)
    arrivals = sorted(
        (s for seen in analysis.sightings.values() for s in seen),
        key=lambda s: _arrival_key(s, order_by),
    )
    latest: dict[str | None, ExpectedRow] = {}
    first_seen: set[Identity] = set()
    out: list[Entry] = []
    for sighting in arrivals:
        identity = sighting.identity
        if identity is None or identity in first_seen:
            continue
        first_seen.add(identity)
        item = item_of[identity]
        group = _key_of(item, key)
        ahead = latest.get(group)
        if ahead is not None and rank[ahead.identity] > rank[identity]:
            out.append(_violation(item, ahead, group, sighting))
        else:
            latest[group] = item
    return out


def _key_of(item: ExpectedRow, key: str | None) -> str | None:
    found, got = lookup(item.row, key or "key")
    if not found:
        raise ValueError(f"expected row {item.row!r} has no key column {key or 'key'!r}")
    return as_text(got)


def _arrival_key(sighting: Sighting, order_by: str | None) -> tuple[Any, int]:
    if order_by is None:
        return (0, sighting.position)
    found, got = lookup(sighting.row, order_by)
    if not found:
        raise ValueError(f"actual row {sighting.row!r} has no order_by column {order_by!r}")
    return (got, sighting.position)


def _violation(item: ExpectedRow, ahead: ExpectedRow, group: str | None, at: Sighting) -> Entry:
    before = f"id {display_id(ahead.identity)}" + (f" ({ahead.origin})" if ahead.origin else "")
    return Entry(
        id=display_id(item.identity),
        origin=item.origin,
        expected=1,
        seen=1,
        row=display_row(item),
        seen_at=(at.where,),
        detail=f"key {group!r}: arrived after {before}, which was seeded later",
    )
