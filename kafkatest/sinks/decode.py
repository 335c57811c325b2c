"""Turn Kafka bytes into the Python values a test compares.

Seeded records and records read back from a sink topic go through the same
decoding, so an assertion sees both sides in one shape: a row with ``key``,
``value`` and ``headers`` decoded as asked, plus where the record sits.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from kafkatest.records import Record

Decoding = Literal["bytes", "str", "json"]
DECODINGS: tuple[str, ...] = ("bytes", "str", "json")


def decode(data: bytes | None, how: Decoding) -> Any:
    """Decode one key, value or header; JSON that does not parse stays text.

    A job under test may write a poison record; failing the read would hide it
    from the report, so undecodable JSON is kept as its text instead.
    """
    if how not in DECODINGS:
        raise ValueError(f"decode as one of {DECODINGS}, not {how!r}")
    if data is None or how == "bytes":
        return data
    text = data.decode("utf-8", errors="replace")
    if how == "str":
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def record_row(
    record: Record,
    key: Decoding = "str",
    value: Decoding = "json",
    headers: Decoding = "str",
) -> dict[str, Any]:
    """A record as a plain dict: topic, partition, offset, timestamp_ms, key, value, headers.

    Headers become a dict (the last value of a repeated name wins, as in Spark),
    because tests look them up by name.
    """
    return {
        "topic": record.topic,
        "partition": record.partition,
        "offset": record.offset,
        "timestamp_ms": record.timestamp_ms,
        "key": decode(record.key, key),
        "value": decode(record.value, value),
        "headers": {name: decode(data, headers) for name, data in record.headers},
    }


def lookup(row: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    """Find ``path`` in a row: a column, a dotted path, or a field of a JSON value.

    Returns ``(found, value)``. ``"order_id"`` finds a column, else
    ``row["value"]["order_id"]``; ``"headers.kafkatest.id"`` finds a header whose
    name itself has dots, in a dict or in Spark's headers column (a list of
    ``{"key", "value"}`` structs, the last of a repeated name winning, as Kafka's
    ``lastHeader``). This lets one column name match seeded records and
    sink rows of any shape.
    """
    found, got = _walk(row, path)
    if found:
        return True, got
    inner = row.get("value")
    if isinstance(inner, Mapping):
        return _walk(inner, path)
    return False, None


def _walk(node: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    if path in node:
        return True, node[path]
    for cut in range(len(path)):
        if path[cut] != ".":
            continue
        head = path[:cut]
        child = _as_mapping(node.get(head))
        if child is not None:
            found, got = _walk(child, path[cut + 1 :])
            if found:
                return True, got
    return False, None


def _as_mapping(child: Any) -> Mapping[str, Any] | None:
    """A dict as is; Spark's headers column (``[{"key": k, "value": v}, ...]``) as a dict."""
    if isinstance(child, Mapping):
        return child
    if (
        isinstance(child, list)
        and child
        and all(isinstance(item, Mapping) and set(item) == {"key", "value"} for item in child)
    ):
        return {item["key"]: item["value"] for item in child}
    return None
