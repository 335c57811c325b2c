"""Bring expected and actual data to rows with identities that can be matched.

Expected data is a `SeedResult`, `Record`s, dicts or a DataFrame; actual data is
what a sink reader returns. Both become dict rows, and each row gets an identity:
a tuple of the user's key columns, or the seed identity, compared as text because
sinks such as CSV lose types.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from kafkatest.records import Record
from kafkatest.seeding.items import DEFAULT_ID_HEADER
from kafkatest.seeding.result import Origin, SeedResult
from kafkatest.sinks.decode import lookup, record_row
from kafkatest.sinks.frames import is_dataframe, rows_of

Identity = tuple[str | None, ...]
Candidates = list[tuple[str, ...]]


@dataclass(frozen=True)
class ExpectedRow:
    """One record the job should deliver, with where it came from when known.

    A seeded record is decoded into a row only when a report shows it: decoding
    100k JSON values that matched would double the cost of an assertion.
    """

    identity: Identity
    source: dict[str, Any] | Record
    origin: Origin | None
    compare: bool
    #: Where every seeded copy of this identity landed, when it was seeded more than once
    #: on purpose (``seed(..., duplicates="allow")``): one expected row stands for them all.
    copies: tuple[Origin, ...] = ()

    @cached_property
    def row(self) -> dict[str, Any]:
        source = self.source
        return record_row(source) if isinstance(source, Record) else source


def columns_of(on: str | Sequence[str] | None) -> tuple[str, ...] | None:
    if on is None:
        return None
    return (on,) if isinstance(on, str) else tuple(on)


def to_rows(data: Any) -> list[dict[str, Any]]:
    """Rows as dicts from dicts, Spark Rows, `Record`s or a DataFrame."""
    if is_dataframe(data):
        return rows_of(data)
    out: list[dict[str, Any]] = []
    for item in data:
        if isinstance(item, Record):
            out.append(record_row(item))
        elif isinstance(item, Mapping):
            out.append(dict(item))
        elif hasattr(item, "asDict"):
            out.append(item.asDict(recursive=True))
        else:
            raise TypeError(f"rows must be dicts, Spark Rows or Records, got {type(item).__name__}")
    return out


def seed_candidates(id_field: str | None, id_header: str | None) -> Candidates:
    """Where a seed identity may show up in a sink row, most specific first."""
    paths: list[str] = []
    if id_field is not None:
        paths += [id_field, f"value.{id_field}"]
    if id_header is not None:
        paths += [f"headers.{id_header}", id_header]
    return [(path,) for path in paths]


def identify(row: Mapping[str, Any], candidates: Candidates) -> Identity | None:
    """The identity of a row: the first candidate whose columns are all present."""
    for columns in candidates:
        parts: list[str | None] = []
        for column in columns:
            found, got = lookup(row, column)
            if not found:
                break
            parts.append(as_text(got))
        else:
            return tuple(parts)
    return None


def as_text(value: Any) -> str | None:
    """Identity parts compare as text: 5, 5.0, "5" and b"5" are one identity."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (Mapping, list)):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


def expected_rows(
    expected: Any, on: tuple[str, ...] | None, ignore: Sequence[str]
) -> tuple[list[ExpectedRow], Candidates]:
    """The expected side as rows with identities, and how to find them in actual rows."""
    if isinstance(expected, SeedResult):
        candidates = seed_candidates(expected.id_field, expected.id_header)
        if on is None and expected.duplicates == "allow":
            return _distinct_identities(expected), candidates
        if on is None:
            return [
                ExpectedRow((rid,), rec, _origin(rec), False)
                for rid, rec in zip(expected.ids, expected.records, strict=True)
            ], candidates
        return _keyed_records(list(expected.records), on), [on]
    items = list(expected) if not is_dataframe(expected) else expected
    if not is_dataframe(items) and items and all(isinstance(i, Record) for i in items):
        if on is not None:
            return _keyed_records(items, on), [on]
        if any(rec.header(DEFAULT_ID_HEADER) is None for rec in items):
            raise ValueError(
                f"these records carry no {DEFAULT_ID_HEADER!r} header: name the key columns with on="
            )
        candidates = seed_candidates(None, DEFAULT_ID_HEADER)
        return [_record_expected(rec, candidates, False) for rec in items], candidates
    rows = to_rows(items)
    columns = on or tuple(sorted({c for row in rows for c in row} - set(ignore)))
    out = []
    for row in rows:
        identity = identify(row, [columns])
        if identity is None:
            raise ValueError(f"expected row {row!r} has no column among {list(columns)}")
        out.append(ExpectedRow(identity, row, None, on is not None))
    return out, [columns]


def _distinct_identities(seeded: SeedResult) -> list[ExpectedRow]:
    """One expected row per identity (its first copy), naming where all its copies are:
    intended duplicates are one record to deliver, not several."""
    copies: dict[str, list[Record]] = {}
    for rid, rec in zip(seeded.ids, seeded.records, strict=True):
        copies.setdefault(rid, []).append(rec)
    out = []
    for rid, recs in copies.items():
        origins = tuple(o for o in (_origin(r) for r in recs) if o is not None)
        out.append(
            ExpectedRow((rid,), recs[0], _origin(recs[0]), False, origins if len(recs) > 1 else ())
        )
    return out


def _keyed_records(records: list[Record], on: tuple[str, ...]) -> list[ExpectedRow]:
    return [_record_expected(rec, [on], False) for rec in records]


def _record_expected(record: Record, candidates: Candidates, compare: bool) -> ExpectedRow:
    row = record_row(record)
    identity = identify(row, candidates)
    if identity is None:
        where = _origin(record)
        raise ValueError(f"expected record {where or row!r} has no {candidates[0]} to match on")
    return ExpectedRow(identity, row, _origin(record), compare)


def _origin(record: Record) -> Origin | None:
    if record.partition is None or record.offset is None:
        return None
    return Origin(record.topic, record.partition, record.offset)


def display_id(identity: Identity | None) -> str:
    if identity is None:
        return "(no identity)"
    text = "/".join("null" if part is None else part for part in identity)
    return text if len(text) <= 60 else text[:57] + "..."


def display_row(item: ExpectedRow) -> Any:
    """Expected records show key and value (the origin is printed beside them)."""
    if item.origin is not None and {"key", "value"} <= set(item.row):
        return {"key": item.row["key"], "value": item.row["value"]}
    return item.row
