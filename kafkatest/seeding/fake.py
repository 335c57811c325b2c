"""Realistic JSON values from a small schema of faker providers, quickly.

Faker costs tens of microseconds a call, too slow for 100k records; each field
therefore draws from a pool of `pool_size` values made once. Fields that must be
unique use the built-in ``"seq"`` (0, 1, 2, ...) or ``"uuid4"`` providers, which
are computed per record. The output depends only on the schema, count, seed and
`now`: faker's date providers count from the current time (``date_time_this_year``,
``past_date``), so generation runs with faker's clock pinned to `now`, a fixed instant
unless the caller names another, and two runs a second (or a year) apart agree.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import random
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # Faker's providers take ~0.6 s to import: only when values are made
    from faker import Faker

Provider = str | tuple[str, Mapping[str, Any]] | Callable[["Faker"], Any]

#: The instant faker's relative date providers count from unless `now=` says otherwise.
DEFAULT_NOW = dt.datetime(2025, 1, 1, 12, 0, 0)

_clock_lock = threading.Lock()


def fake_values(
    schema: Mapping[str, Provider] | str,
    count: int,
    seed: int = 0,
    locale: str | None = None,
    pool_size: int = 1024,
    now: dt.datetime = DEFAULT_NOW,
) -> list[dict[str, Any]]:
    """Make `count` dicts whose fields come from faker providers; same seed, same data.

    ``schema`` maps a field name to a provider name (``"name"``, ``"email"``), a
    ``(name, kwargs)`` pair (``("pyint", {"max_value": 9})``), a callable taking
    the Faker (called per record, unpooled), or ``"seq"``/``"uuid4"``. Relative date
    providers count from `now` (a naive datetime is local time, as faker takes it).

    An Avro record schema (its JSON text or dict) instead makes records that fit it, for
    ``seed(..., value_format="avro", schema=the same schema)``.
    """
    if count < 0:
        raise ValueError("count must be >= 0")
    from kafkatest.seeding.fake_avro import fake_avro_values, is_avro_schema

    if is_avro_schema(schema):
        return fake_avro_values(schema, count, seed)
    assert not isinstance(schema, str)
    from faker import Faker

    faker = Faker(locale)
    faker.seed_instance(seed)
    rng = random.Random(seed)
    with _faker_clock_at(now):
        makers = {
            name: _maker(faker, rng, name, spec, min(count, pool_size))
            for name, spec in schema.items()
        }
        return [{name: make(index) for name, make in makers.items()} for index in range(count)]


@contextlib.contextmanager
def _faker_clock_at(now: dt.datetime) -> Iterator[None]:
    """Pin the clock of faker's date provider module to `now` while values are made.

    Faker reads ``datetime.now()`` through that module's own name, so swapping that
    name (under a lock, restored afterwards) is the one place its clock can be set.
    """

    class PinnedDatetime(dt.datetime):
        @classmethod
        def now(cls, tz: dt.tzinfo | None = None) -> PinnedDatetime:  # type: ignore[override]
            pinned = now if tz is None else now.astimezone(tz)
            return cls.fromtimestamp(pinned.timestamp(), tz)

    with _clock_lock:
        import faker.providers.date_time as faker_date_time

        original = faker_date_time.datetime
        faker_date_time.datetime = PinnedDatetime  # type: ignore[misc]
        try:
            yield
        finally:
            faker_date_time.datetime = original  # type: ignore[misc]


def _maker(
    faker: Faker, rng: random.Random, field: str, spec: Provider, pool_size: int
) -> Callable[[int], Any]:
    if callable(spec):
        return lambda _index: _plain(spec(faker))
    if spec == "seq":
        return lambda index: index
    if spec == "uuid4":
        return lambda _index: str(uuid.UUID(int=rng.getrandbits(128), version=4))
    name, kwargs = (spec, {}) if isinstance(spec, str) else spec
    provider = getattr(faker, name, None)
    if provider is None or not callable(provider):
        raise ValueError(f"field {field!r}: faker has no provider {name!r}")
    pool = [_plain(provider(**kwargs)) for _ in range(max(pool_size, 1))]
    return lambda _index: pool[rng.randrange(len(pool))]


def _plain(value: Any) -> Any:
    """Faker returns dates, decimals and UUIDs; JSON values need text and numbers."""
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    return value
