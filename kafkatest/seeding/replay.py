"""Put a capture back into a topic: partitions, order, timestamps, headers and schemas.

Avro and JSON Schema values are encoded again with their schema, registered in the
test's registry (it gives its own ids, which the records then carry); Protobuf values
are put back as they were captured, bytes and schema id. Offsets cannot be chosen on a real
broker: the records land at the end of each partition, and `offsets` maps each original
offset to where it landed.
"""

from __future__ import annotations

import io
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kafkatest.errors import BrokerError
from kafkatest.records import Record
from kafkatest.seeding.capture_check import CaptureOutline, check_capture
from kafkatest.seeding.capture_file import (
    CaptureFormatError,
    decode_plain,
    is_header,
    read_lines,
    restore_bytes,
)
from kafkatest.seeding.result import SeedResult

_CHUNK = 10_000


@dataclass(frozen=True)
class ReplayedCapture(SeedResult):
    """A seed from a capture: identities are the original ``partition:offset``."""

    #: (partition, original offset) -> the offset the record got in this topic.
    offsets: dict[tuple[int, int], int] = field(default_factory=dict, compare=False)

    @property
    def shifted(self) -> bool:
        return any(original != now for (_, original), now in self.offsets.items())


class _Schemas:
    """The capture's schemas, registered in the test's registry on first use."""

    def __init__(self, registry: Any, topic: str) -> None:
        self.registry = registry
        self.topic = topic
        self.lines: dict[int, dict[str, Any]] = {}
        self._ready: dict[int, tuple[int, Any]] = {}

    def encode(self, encoded: dict[str, Any], where: str) -> bytes:
        schema_id = int(encoded["schema_id"])
        if schema_id not in self._ready:
            self._ready[schema_id] = self._register(schema_id)
        new_id, parsed = self._ready[schema_id]
        out = io.BytesIO()
        out.write(b"\x00" + struct.pack(">I", new_id))
        if "avro" in encoded:
            from fastavro import schemaless_writer

            schemaless_writer(out, parsed, restore_bytes(encoded["avro"]))
        else:  # JSON Schema: the JSON itself after the framing
            out.write(decode_plain({"json": encoded["json"]}) or b"")
        return out.getvalue()

    def _register(self, schema_id: int) -> tuple[int, Any]:
        import json

        from fastavro import parse_schema

        line = self.lines.get(schema_id)
        if line is None:
            raise CaptureFormatError(f"the capture uses schema {schema_id} but does not hold it")
        schema_type = str(line.get("schema_type", "AVRO"))
        if self.registry is None:
            raise ValueError(
                f"the capture holds {schema_type} records (schema {schema_id}): give "
                "schema_registry="
            )
        from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

        from kafkatest.seeding.wire import registry_url

        client = SchemaRegistryClient({"url": registry_url(self.registry)})
        field_name = str(line.get("subject", "")).rsplit("-", 1)[-1] or "value"
        new_id = client.register_schema(
            f"{self.topic}-{field_name}", Schema(line["schema"], schema_type)
        )
        if schema_type != "AVRO":
            return new_id, None
        return new_id, parse_schema(json.loads(line["schema"]))


def capture_records(
    path: str | os.PathLike[str], topic: str, registry: Any = None
) -> Iterator[tuple[tuple[int, int], Record]]:
    """((partition, original offset), record for `topic`) of each record of a capture
    that `capture_check.check_capture` has passed."""
    schemas = _Schemas(registry, topic)
    for _number, entry in read_lines(path):
        if is_header(entry):
            continue
        if "schema" in entry:
            schemas.lines[int(entry["schema_id"])] = entry
            continue
        yield (
            (int(entry["partition"]), int(entry["offset"])),
            Record(
                topic=topic,
                value=_bytes(entry["value"], schemas, "value"),
                key=_bytes(entry["key"], schemas, "key"),
                headers=tuple((n, decode_plain(v)) for n, v in entry.get("headers") or []),
                partition=int(entry["partition"]),
                timestamp_ms=entry.get("timestamp"),
            ),
        )


def _bytes(encoded: dict[str, Any] | None, schemas: _Schemas, where: str) -> bytes | None:
    if encoded is not None and (
        "avro" in encoded or ("json" in encoded and "schema_id" in encoded)
    ):
        return schemas.encode(encoded, where)
    return decode_plain(encoded)


def start_logs_at_captured_offsets(broker: Any, topic: str, outline: CaptureOutline) -> None:
    """On a broker whose state kafkatest holds (the emulator), begin each empty partition's
    log at the first captured offset, so the records keep their original offsets and a
    checkpoint or offsets JSON from production resumes against them. Elsewhere, or on a
    partition that already holds records, they land at its end."""
    from kafkatest.brokers.capabilities import Capability

    if Capability.STATE not in getattr(broker, "capabilities", ()):
        return
    starts = {partition: span[0] for partition, span in outline.ranges.items()}
    state = broker.state

    def start() -> None:
        found = state.topics.find(topic)
        if found is None:
            return
        for partition, offset in starts.items():
            if partition < len(found.partitions):
                log = found.partition(partition).log
                if log.log_end_offset == log.log_start_offset == 0:
                    log.start_at(offset)

    broker.call(start)


def prepare_topic(broker: Any, topic: str, outline: CaptureOutline, path: Any) -> None:
    """A topic the capture can land in: one that does not exist is created as captured
    (its partitions, and retention.ms=-1 so old timestamps stay); one with fewer
    partitions than the records name is refused, saying how to make it."""
    from kafkatest.brokers.lookup import topic_partitions

    if outline.records == 0:
        return
    partitions = topic_partitions(broker, topic)
    if partitions is None:
        broker.create_topic(topic, partitions=outline.partitions, config={"retention.ms": "-1"})
        return
    needed = outline.last_partition + 1
    if partitions < needed:
        raise CaptureFormatError(
            f"{path}: its records are in partitions up to {outline.last_partition}, and topic "
            f"{topic!r} has {partitions}: create it with {outline.partitions} "
            f"(kafka_topic(partitions={outline.partitions}), broker.create_topic) or add "
            "partitions (kafka_faults.add_partitions); nothing was seeded"
        )


def replay_capture(
    broker: Any,
    topic: str,
    path: str | os.PathLike[str],
    *,
    schema_registry: Any = None,
    timeout_s: float = 120.0,
) -> ReplayedCapture:
    """Check the whole capture, make its topic ready, then produce its records to
    `topic`, in order, a chunk at a time. A bad file seeds nothing; a broker that
    refuses a chunk part-way is reported with what was seeded before it."""
    outline = check_capture(path)
    placed: list[Record] = []
    offsets: dict[tuple[int, int], int] = {}
    ids: list[str] = []
    chunk: list[tuple[tuple[int, int], Record]] = []

    def flush() -> None:
        try:
            done = broker.produce([record for _, record in chunk], timeout_s=timeout_s)
        except BrokerError as exc:
            raise BrokerError(
                f"{exc}\n{_seeded_so_far(path, len(placed), outline.records, offsets)}"
            ) from exc
        for (origin, _), record in zip(chunk, done, strict=True):
            offsets[origin] = int(record.offset)
            ids.append(f"{origin[0]}:{origin[1]}")
        placed.extend(done)
        chunk.clear()

    prepare_topic(broker, topic, outline, path)
    start_logs_at_captured_offsets(broker, topic, outline)
    for item in capture_records(path, topic, schema_registry):
        chunk.append(item)
        if len(chunk) >= _CHUNK:
            flush()
    if chunk:
        flush()
    return ReplayedCapture(
        topic=topic,
        records=tuple(placed),
        ids=tuple(ids),
        id_header=None,
        id_field=None,
        broker=broker,
        offsets=offsets,
    )


def _seeded_so_far(path: Any, seeded: int, total: int, offsets: dict[tuple[int, int], int]) -> str:
    """Exactly what a replay cut short wrote: how many records, and to which offsets."""
    if not seeded:
        return f"nothing of {path} was seeded ({total} records)"
    by_partition: dict[int, list[int]] = {}
    for (partition, _original), landed in offsets.items():
        by_partition.setdefault(partition, []).append(landed)
    where = ", ".join(
        f"partition {p}: offsets {min(o)}-{max(o)}" for p, o in sorted(by_partition.items())
    )
    return f"{seeded} of the {total} records of {path} were seeded before it ({where})"
