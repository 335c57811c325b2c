"""Write test data to a topic and remember where every record landed."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from typing import Any

from kafkatest.brokers.client import ClientOperations
from kafkatest.brokers.lookup import topic_partitions
from kafkatest.errors import BrokerError
from kafkatest.records import Record
from kafkatest.seeding.files import load_fixture
from kafkatest.seeding.items import DEFAULT_ID_HEADER, prepare
from kafkatest.seeding.result import SeedResult
from kafkatest.seeding.retention import stamped_with_broker_time, warn_if_older_than_retention
from kafkatest.seeding.wire import framed_encoder


class SeedAutoCreateWarning(UserWarning):
    """seed() wrote to a topic that did not exist: the broker created it with its defaults."""


def warn_if_auto_created(broker: ClientOperations, topic: str, records: list[Record]) -> None:
    """Warn before producing to a topic that does not exist (the broker will create it).

    A misspelt topic name otherwise "works": the records land in a new topic with
    the broker's default partition count and configs, and the job reads nothing.
    """
    if not isinstance(broker, ClientOperations):
        return  # a stand-in that only places records (seeding's own unit tests)
    try:
        partitions = topic_partitions(broker, topic)
    except BrokerError:
        return  # cannot tell: producing will say what is wrong
    if partitions is not None:
        return
    wanted = sorted({r.partition for r in records if r.partition is not None})
    beyond = (
        f"; records name partition(s) {wanted}, which it will not have" if wanted[-1:] > [0] else ""
    )
    warnings.warn(
        f"seed: topic {topic!r} does not exist, so the broker creates it now with its default "
        f"partition count (num.partitions, 1 here) and configs{beyond}. Create it first "
        "(kafka_topic(partitions=N), broker.create_topic) to choose them, and so that a "
        "misspelt name fails instead of seeding a topic nobody reads.",
        SeedAutoCreateWarning,
        stacklevel=3,
    )


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
    value_format: str = "json",
    schema: Any = None,
    key_format: str = "json",
    key_schema: Any = None,
    schema_registry: Any = None,
    duplicates: str = "forbid",
) -> SeedResult:
    """Produce `data` to `topic` and return what was placed, with identities.

    `data` is an iterable of values (dicts become JSON), record envelopes
    (``{"key", "value", "headers", "partition", "timestamp_ms"}``) or `Record`s,
    or the path of a fixture file. A capture file (``kafkatest capture``) is replayed
    as it was read: partitions, order, timestamps, headers, schemas (docs/how-to/capture.md).
    Each record's identity is the `id_field` of
    its JSON value when present, else its `id_header` header, else
    ``f"{id_prefix}{index}"``; it is written to that header (and, for JSON
    objects, to `id_field` when named) so the sink can be matched back to the
    seed. `key_field` keys each record by that field of its value.

    ``value_format="avro"`` (or ``"protobuf"``, ``"json-schema"``) writes values in
    Confluent's wire format with `schema` (Avro or JSON Schema text or dict; a generated
    message class for Protobuf), registered in `schema_registry` (its URL or the
    ``schema_registry`` fixture) under ``<topic>-value``; `key_format` and `key_schema`
    do the same for keys under ``<topic>-key``. Identities stay in the header.

    Identities must be unique unless ``duplicates="allow"``: then records may repeat an
    identity on purpose (the duplicates a dedup job removes), and the delivery
    assertions expect each distinct identity once, naming the seeded copies.
    """
    if isinstance(data, (str, os.PathLike)):
        from kafkatest.seeding.capture_file import is_capture_file

        if is_capture_file(data):
            from kafkatest.seeding.replay import replay_capture

            return replay_capture(
                broker, topic, data, schema_registry=schema_registry, timeout_s=timeout_s
            )
        data = load_fixture(data)
    value_encoder = framed_encoder(value_format, schema, schema_registry, topic)
    key_encoder = framed_encoder(key_format, key_schema, schema_registry, topic, is_key=True)
    records, ids = prepare(
        data,
        topic,
        key_field=key_field,
        id_header=id_header,
        id_field=id_field,
        id_prefix=id_prefix,
        value_encoder=value_encoder,
        key_encoder=key_encoder,
        duplicates=duplicates,
    )
    records = stamped_with_broker_time(broker, records)
    if records:
        warn_if_auto_created(broker, topic, records)
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
        duplicates=duplicates,
    )
