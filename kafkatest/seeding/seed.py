"""Write test data to a topic and remember where every record landed."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from kafkatest.brokers.client import ClientOperations
from kafkatest.errors import BrokerError
from kafkatest.seeding.files import load_fixture
from kafkatest.seeding.items import DEFAULT_ID_HEADER, prepare
from kafkatest.seeding.result import SeedResult
from kafkatest.seeding.retention import warn_if_older_than_retention


def seed(
    broker: ClientOperations,
    topic: str,
    data: Iterable[Any] | str | os.PathLike[str],
    *,
    key_field: str | None = None,
    id_header: str | None = DEFAULT_ID_HEADER,
    id_field: str | None = None,
    id_prefix: str = "",
    timeout_s: float = 120.0,
) -> SeedResult:
    """Produce `data` to `topic` and return what was placed, with identities.

    `data` is an iterable of values (dicts become JSON), record envelopes
    (``{"key", "value", "headers", "partition", "timestamp_ms"}``) or `Record`s,
    or the path of a fixture file. Each record's identity is the `id_field` of
    its JSON value when present, else its `id_header` header, else
    ``f"{id_prefix}{index}"``; it is written to that header (and, for JSON
    objects, to `id_field` when named) so the sink can be matched back to the
    seed. `key_field` keys each record by that field of its value.
    """
    if isinstance(data, (str, os.PathLike)):
        data = load_fixture(data)
    records, ids = prepare(
        data,
        topic,
        key_field=key_field,
        id_header=id_header,
        id_field=id_field,
        id_prefix=id_prefix,
    )
    warn_if_older_than_retention(broker, topic, records)
    placed = broker.produce(records, timeout_s=timeout_s) if records else []
    if len(placed) != len(records):
        raise BrokerError(f"seeding {topic!r}: {len(records)} records sent, {len(placed)} placed")
    return SeedResult(
        topic=topic,
        records=tuple(placed),
        ids=tuple(ids),
        id_header=id_header,
        id_field=id_field,
        broker=broker,
    )
