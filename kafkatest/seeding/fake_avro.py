"""Values that fit an Avro schema, from a seeded random source: same seed, same records.

Strings come from a small faker pool (names, words) so they read like data; numbers,
enums, unions, arrays and maps are drawn per record. Named types are resolved through
fastavro's parse, and a recursive type stops recursing by taking a union's null branch
(or an empty array/map) below `MAX_DEPTH`.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import uuid
from collections.abc import Mapping
from typing import Any

MAX_DEPTH = 8


def is_avro_schema(schema: Any) -> bool:
    """An Avro record schema (text or dict), as opposed to fake_values' provider mapping."""
    if isinstance(schema, str):
        return True
    return (
        isinstance(schema, Mapping)
        and schema.get("type") == "record"
        and isinstance(schema.get("fields"), list)
    )


def fake_avro_values(schema: Any, count: int, seed: int = 0) -> list[Any]:
    import fastavro
    from faker import Faker

    document = json.loads(schema) if isinstance(schema, str) else schema
    names: dict[str, Any] = {}
    parsed = fastavro.parse_schema(document, named_schemas=names)
    faker = Faker()
    faker.seed_instance(seed)
    words = [faker.word() for _ in range(64)] + [faker.name() for _ in range(64)]
    rng = random.Random(seed)
    return [_value(parsed, names, rng, words, 0) for _ in range(count)]


def _value(
    schema: Any, names: dict[str, Any], rng: random.Random, words: list[str], depth: int
) -> Any:
    if isinstance(schema, str) and schema in names:
        schema = names[schema]
    if isinstance(schema, list):
        if depth >= MAX_DEPTH and "null" in schema:
            return None
        return _value(rng.choice(schema), names, rng, words, depth + 1)
    kind = schema if isinstance(schema, str) else schema["type"]
    logical = None if isinstance(schema, str) else schema.get("logicalType")
    if logical == "uuid":
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    if logical in ("timestamp-millis", "timestamp-micros", "local-timestamp-millis"):
        return dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(
            seconds=rng.randrange(365 * 86400)
        )
    if logical == "date":
        return dt.date(2025, 1, 1) + dt.timedelta(days=rng.randrange(365))
    if logical == "decimal":
        import decimal

        scale = int(schema.get("scale", 0))
        return decimal.Decimal(rng.randrange(10**6)).scaleb(-scale)
    if kind == "null":
        return None
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "int":
        return rng.randrange(-(2**31), 2**31)
    if kind == "long":
        return rng.randrange(-(2**40), 2**40)
    if kind in ("float", "double"):
        return round(rng.uniform(-1000, 1000), 3)
    if kind == "string":
        return rng.choice(words)
    if kind == "bytes":
        return rng.randbytes(rng.randrange(1, 16))
    if kind == "fixed":
        return rng.randbytes(int(schema["size"]))
    if kind == "enum":
        return rng.choice(schema["symbols"])
    if kind == "array":
        size = 0 if depth >= MAX_DEPTH else rng.randrange(0, 4)
        return [_value(schema["items"], names, rng, words, depth + 1) for _ in range(size)]
    if kind == "map":
        size = 0 if depth >= MAX_DEPTH else rng.randrange(0, 4)
        return {
            f"{rng.choice(words)}-{i}": _value(schema["values"], names, rng, words, depth + 1)
            for i in range(size)
        }
    if kind == "record" or kind == "error":
        return {
            f["name"]: _value(f["type"], names, rng, words, depth + 1) for f in schema["fields"]
        }
    return _value(kind, names, rng, words, depth)
