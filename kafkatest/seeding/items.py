"""Normalise whatever a test seeds into Kafka records that carry an identity.

Users seed plain values (dicts become JSON), record envelopes (dicts naming key,
value, headers, partition, timestamp) or ready `Record`s. Every record gets a
stable identity, written where the user can find it again at the sink: a header
(``kafkatest.id`` by default) and/or a JSON field they name.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kafkatest.records import Record, last_header, to_bytes, to_headers

#: Turns a seeded value (or key) into its bytes: a schema-registry serializer.
Encoder = Callable[[Any], "bytes | None"]

DEFAULT_ID_HEADER = "kafkatest.id"
#: Whether seeded identities may repeat (see `prepare`).
DUPLICATES = ("forbid", "allow")
ENVELOPE_FIELDS = frozenset({"key", "value", "headers", "partition", "timestamp", "timestamp_ms"})


def is_envelope(item: Any) -> bool:
    """A dict with a ``value`` member and only record members describes a whole record.

    Any other dict is a JSON value. To seed a value that itself looks like an
    envelope, wrap it: ``{"value": {"value": 1}}``.
    """
    return isinstance(item, Mapping) and "value" in item and set(item) <= ENVELOPE_FIELDS


def to_timestamp_ms(when: Any) -> int | None:
    """Accept epoch milliseconds, a datetime or an ISO-8601 string (YAML gives datetimes)."""
    if when is None or isinstance(when, int):
        return when
    if isinstance(when, str):
        when = dt.datetime.fromisoformat(when.replace("Z", "+00:00"))
    if isinstance(when, dt.datetime):
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.timezone.utc)
        return int(when.timestamp() * 1000)
    raise TypeError(f"timestamp must be epoch ms, a datetime or ISO-8601 text, not {when!r}")


def prepare(
    items: Iterable[Any],
    topic: str,
    *,
    key_field: str | None,
    id_header: str | None,
    id_field: str | None,
    id_prefix: str,
    value_encoder: Encoder | None = None,
    key_encoder: Encoder | None = None,
    duplicates: str = "forbid",
) -> tuple[list[Record], list[str]]:
    """Build the records to produce and their identities, in input order.

    ``duplicates="allow"`` accepts an identity that repeats: a record seeded again on
    purpose (what a producer retry leaves, what a dedup job exists to remove).
    """
    if id_header is None and id_field is None:
        raise ValueError("name an id_header or an id_field: seeded records need an identity")
    if duplicates not in DUPLICATES:
        raise ValueError(f"duplicates must be one of {DUPLICATES}, not {duplicates!r}")
    records: list[Record] = []
    ids: list[str] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        record, record_id = _one(
            item,
            index,
            topic,
            key_field,
            id_header,
            id_field,
            f"{id_prefix}{index}",
            value_encoder,
            key_encoder,
        )
        if record_id in seen and duplicates == "forbid":
            raise ValueError(
                f"item {index}: id {record_id!r} is used twice; identities must be unique "
                "(set id_prefix when seeding a topic more than once, or pass "
                'duplicates="allow" when the repeat is intended)'
            )
        seen.add(record_id)
        records.append(record)
        ids.append(record_id)
    return records, ids


def _one(
    item: Any,
    index: int,
    topic: str,
    key_field: str | None,
    id_header: str | None,
    id_field: str | None,
    default_id: str,
    value_encoder: Encoder | None = None,
    key_encoder: Encoder | None = None,
) -> tuple[Record, str]:
    # Locals and one Record at the end: this loop runs 100k times per large seed.
    if isinstance(item, Record):
        value, raw = _json_object(item.value), item.value
        key, headers = item.key, item.headers
        partition, timestamp_ms = item.partition, item.timestamp_ms
    elif is_envelope(item):
        value, raw = item["value"], None
        key = item.get("key")
        key = to_bytes(key) if key_encoder is None else key_encoder(key)
        headers = to_headers(item.get("headers"))
        partition = item.get("partition")
        timestamp_ms = to_timestamp_ms(item.get("timestamp_ms", item.get("timestamp")))
    else:
        value, raw, key, headers, partition, timestamp_ms = item, None, None, (), None, None
    given = last_header(headers, id_header)
    record_id = _identity(value, given, id_header, id_field, default_id, index)
    if isinstance(value, dict) and id_field is not None and id_field not in value:
        value, raw = {id_field: record_id, **value}, None
    try:
        if key is None and key_field is not None:
            field = _key_from(value, key_field, index)
            key = to_bytes(field) if key_encoder is None else key_encoder(field)
        if raw is None:
            raw = _encode(value) if value_encoder is None else value_encoder(value)
    except ValueError as exc:
        if "JSON compliant" not in str(exc):
            raise
        raise ValueError(
            f"item {index} (id {record_id!r}): its value holds NaN or an infinity, which JSON "
            "cannot carry (a JSON reader such as Spark's from_json would not parse it); "
            "use None, or send the number as text"
        ) from None
    if id_header is not None and given is None:
        headers = (*headers, (id_header, record_id.encode("utf-8")))
    record = Record(topic, raw, key, headers, partition, timestamp_ms)
    return record, record_id


def _identity(
    value: Any,
    given: bytes | None,
    id_header: str | None,
    id_field: str | None,
    default_id: str,
    index: int,
) -> str:
    if id_field is not None and isinstance(value, Mapping) and id_field in value:
        return str(value[id_field])
    if given is not None:
        return given.decode("utf-8")
    if id_header is not None or isinstance(value, Mapping):
        return default_id
    raise ValueError(
        f"item {index}: its value is not a JSON object, so id_field {id_field!r} cannot "
        "carry its identity; keep an id_header too"
    )


def _key_from(value: Any, key_field: str, index: int) -> Any:
    if not isinstance(value, Mapping) or key_field not in value:
        raise ValueError(f"item {index}: key_field {key_field!r} is not a field of {value!r}")
    return value[key_field]


def _json_object(data: bytes | None) -> Any:
    if data is None or not data.startswith(b"{"):
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


def _encode(value: Any) -> bytes | None:
    """Like `to_bytes`, but dates (YAML fixtures carry them) travel as ISO-8601 text."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), default=_iso, allow_nan=False).encode()
    return to_bytes(value)


def _iso(value: Any) -> str:
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable: {value!r}")
