"""Match actual rows to expected records and sort every record into an outcome.

The model follows Jepsen's queue checkers: each expected record has a unique
identity and an origin; reading the sink tells, per identity, how often it was
seen. From that come lost (expected, never seen), duplicated (seen more often
than expected) and unexpected (seen, never expected) records, with content
mismatches and per-key order checked on the matched ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkatest.assertions.rows import (
    ExpectedRow,
    Identity,
    as_text,
    columns_of,
    expected_rows,
    identify,
    to_rows,
)
from kafkatest.seeding.result import LogRanges, SeedResult
from kafkatest.sinks.decode import lookup


@dataclass(frozen=True)
class Sighting:
    """One actual row: its position in the sink output and where the sink put it."""

    position: int
    row: dict[str, Any]
    identity: Identity | None = None

    @property
    def where(self) -> str:
        row = self.row
        if all(isinstance(row.get(c), int) for c in ("partition", "offset")) and row.get("topic"):
            return f"{row['topic']}[{row['partition']}]@{row['offset']}"
        if "batch_id" in row:
            return f"batch {row['batch_id']}, row {self.position}"
        return f"row {self.position}"


@dataclass
class Analysis:
    """Expected records, the sightings of each, and rows nobody expected."""

    expected: list[ExpectedRow]
    matched_on: list[tuple[str, ...]]
    ignore: tuple[str, ...]
    seen: int = 0
    sightings: dict[Identity, list[Sighting]] = field(default_factory=dict)
    unexpected: list[Sighting] = field(default_factory=list)
    expected_count: dict[Identity, int] = field(default_factory=dict)
    #: Where the seeded logs are now (a `SeedResult`'s broker), for reports of missing records.
    log_ranges: LogRanges | None = None

    @property
    def distinct(self) -> int:
        identities = {k for k, v in self.sightings.items() if v}
        return len(identities) + len({_identity_key(s) for s in self.unexpected})

    def missing_rows(self) -> list[ExpectedRow]:
        """Expected rows not seen; with repeated identities, the last copies are missing."""
        out: list[ExpectedRow] = []
        used: dict[Identity, int] = {}
        for item in self.expected:
            index = used.get(item.identity, 0)
            used[item.identity] = index + 1
            if index >= len(self.sightings.get(item.identity, ())):
                out.append(item)
        return out

    def duplicated(self) -> list[tuple[ExpectedRow, list[Sighting]]]:
        """Identities seen more often than expected, with every sighting."""
        first = _first_by_identity(self.expected)
        return [
            (first[identity], seen)
            for identity, seen in self.sightings.items()
            if len(seen) > self.expected_count[identity]
        ]

    def mismatched(self) -> list[tuple[ExpectedRow, Sighting, list[str]]]:
        """Matched rows whose other columns differ from the expected row."""
        out = []
        for item in _first_by_identity(self.expected).values():
            if not item.compare:
                continue
            skip = {c for cols in self.matched_on for c in cols} | set(self.ignore)
            for sighting in self.sightings.get(item.identity, ()):
                diffs = _differences(item.row, sighting.row, skip)
                if diffs:
                    out.append((item, sighting, diffs))
                    break
        return out


def analyse(
    expected: Any,
    actual: Any,
    on: str | Sequence[str] | None = None,
    ignore: Sequence[str] = (),
) -> Analysis:
    """Match `actual` rows against `expected` by identity (see `rows.expected_rows`)."""
    items, candidates = expected_rows(expected, columns_of(on), ignore)
    analysis = Analysis(
        expected=items,
        matched_on=candidates,
        ignore=tuple(ignore),
        log_ranges=expected.broker if isinstance(expected, SeedResult) else None,
    )
    for item in items:
        analysis.expected_count[item.identity] = analysis.expected_count.get(item.identity, 0) + 1
        analysis.sightings.setdefault(item.identity, [])
    for position, row in enumerate(to_rows(actual)):
        analysis.seen += 1
        identity = identify(row, candidates)
        sighting = Sighting(position, row, identity)
        if identity is not None and identity in analysis.expected_count:
            analysis.sightings[identity].append(sighting)
        else:
            analysis.unexpected.append(sighting)
    return analysis


def _first_by_identity(items: list[ExpectedRow]) -> dict[Identity, ExpectedRow]:
    first: dict[Identity, ExpectedRow] = {}
    for item in items:
        first.setdefault(item.identity, item)
    return first


def _identity_key(sighting: Sighting) -> Identity:
    return sighting.identity if sighting.identity is not None else (as_text(sighting.row),)


def _differences(
    expected: Mapping[str, Any], actual: Mapping[str, Any], skip: set[str]
) -> list[str]:
    diffs = []
    for column, want in expected.items():
        if column in skip:
            continue
        found, got = lookup(actual, column)
        if not found:
            diffs.append(f"{column}: expected {want!r}, column absent")
        elif not same_value(want, got):
            diffs.append(f"{column}: expected {want!r}, got {got!r}")
    return diffs


def same_value(want: Any, got: Any) -> bool:
    """Equal, or equal once text from a typeless sink (CSV) is read as the expected type."""
    if want == got or as_text(want) == as_text(got):
        return True
    numbers = (int, float)
    if isinstance(got, str) and isinstance(want, numbers) and not isinstance(want, bool):
        try:
            return float(got) == want
        except ValueError:
            return False
    return False
