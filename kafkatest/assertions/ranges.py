"""Write sets of offsets as compact ranges ("0-41, 43-99") that a person can read."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

Span = tuple[int, int]


def runs(chosen: Iterable[int], universe: Sequence[int]) -> list[Span]:
    """Maximal runs of `universe` (sorted offsets) whose members are all in `chosen`.

    Runs follow the universe rather than plain integers, so a gap that was never
    seeded (a transaction marker, a compacted offset) does not split a range.
    """
    wanted = set(chosen)
    spans: list[Span] = []
    start: int | None = None
    previous = 0
    for offset in universe:
        if offset in wanted:
            if start is None:
                start = offset
            previous = offset
        elif start is not None:
            spans.append((start, previous))
            start = None
    if start is not None:
        spans.append((start, previous))
    return spans


def spans_text(spans: Sequence[Span], limit: int | None = None) -> str:
    """``[(0, 41), (43, 43)]`` as ``"0-41, 43"``; past `limit` spans, say how many more."""
    if not spans:
        return "none"
    shown = spans if limit is None else spans[:limit]
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in shown)
    if len(spans) > len(shown):
        text += f", ... ({len(spans) - len(shown)} more ranges)"
    return text
