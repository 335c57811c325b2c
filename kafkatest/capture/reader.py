"""Read a sample of topics into a capture file, without joining or committing any group.

Partitions are read one at a time (by topic, partition, offset), each from an assigned
start offset to a fixed end, and every record is written out as it arrives: memory stays
flat however many records are captured, and one capture of the same records gives the
same bytes.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from kafkatest.capture.anonymize import Anonymizer
from kafkatest.capture.ranges import TP, CaptureError, Selection, resolve
from kafkatest.capture.values import ValueDecoder, is_decoded, value_of, with_value
from kafkatest.seeding.capture_file import (
    HEADER_KEY,
    TIMESTAMP_TYPES,
    VERSION,
    decode_plain,
    dumps,
    encode_bytes,
)

_BATCH = 2000


@dataclass
class Limits:
    max_records: int | None = None
    max_bytes: int | None = None


@dataclass
class CaptureSummary:
    """What a capture read: records and bytes per partition, and how fast."""

    ranges: dict[TP, tuple[int, int]]
    records: dict[TP, int] = field(default_factory=dict)
    bytes: int = 0
    seconds: float = 0.0
    stopped_by: str | None = None

    @property
    def total(self) -> int:
        return sum(self.records.values())

    def text(self) -> str:
        rate = self.total / self.seconds if self.seconds > 0 else 0.0
        lines = [
            f"captured {self.total} records ({self.bytes} bytes) in {self.seconds:.1f}s "
            f"({rate:,.0f} records/s)"
            + (f"; stopped at {self.stopped_by}" if self.stopped_by else "")
        ]
        for (topic, partition), (start, end) in sorted(self.ranges.items()):
            got = self.records.get((topic, partition), 0)
            lines.append(f"  {topic}[{partition}] offsets {start}-{end - 1}: {got} records")
        return "\n".join(lines)


def consumer_config(client: dict[str, Any]) -> dict[str, Any]:
    """A reader that never commits and never joins (the group id is only librdkafka's due)."""
    return {
        **client,
        "group.id": f"kafkatest-capture-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": True,
        "auto.offset.reset": "error",
        "isolation.level": "read_committed",
        # Without it librdkafka pauses fetching for 1 s whenever its queue is full.
        "fetch.queue.backoff.ms": 10,
    }


#: librdkafka's errors that no wait will mend: the capture stops with them at once.
_HOPELESS = frozenset(
    {
        KafkaError._ALL_BROKERS_DOWN,
        KafkaError._AUTHENTICATION,
        KafkaError._RESOLVE,
        KafkaError._SSL,
        KafkaError._INVALID_ARG,
    }
)


def _metadata(
    consumer: Consumer, errors: list[KafkaError], bootstrap: str, timeout_s: float = 30.0
) -> Any:
    """The cluster's metadata, a second's wait at a time: when librdkafka reports that
    no broker can be reached (or logged into), the capture says so then, not after 30 s."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return consumer.list_topics(timeout=1.0)
        except KafkaException:
            consumer.poll(0)  # serves error_cb
            hopeless = [e for e in errors if e.code() in _HOPELESS]
            if hopeless:
                raise CaptureError(
                    f"cannot reach the cluster at {bootstrap}: {hopeless[-1].str()}"
                ) from None
            if time.monotonic() > deadline:
                raise


def topic_layout(
    consumer: Consumer,
    topics: list[str],
    errors: list[KafkaError] | None = None,
    bootstrap: str = "",
) -> dict[str, int]:
    """Partition count per topic; an unknown topic is an error that names it."""
    metadata = _metadata(consumer, errors if errors is not None else [], bootstrap)
    out = {}
    for topic in topics:
        found = metadata.topics.get(topic)
        if found is None or found.error is not None or not found.partitions:
            reason = found.error if found is not None and found.error else "no such topic"
            raise CaptureError(f"cannot read topic {topic!r}: {reason}")
        out[topic] = len(found.partitions)
    return out


def topic_configs(client: dict[str, Any], topics: list[str]) -> dict[str, dict[str, str] | None]:
    """The topics' configs set on them (not broker defaults); None where describing is refused."""
    from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource

    admin = AdminClient(client)
    out: dict[str, dict[str, str] | None] = {}
    resources = [ConfigResource(ConfigResource.Type.TOPIC, t) for t in topics]
    for resource, future in admin.describe_configs(resources, request_timeout=30).items():
        try:
            entries = future.result()
        except Exception:
            out[resource.name] = None
            continue
        out[resource.name] = {
            name: str(entry.value)
            for name, entry in sorted(entries.items())
            if entry.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value and entry.value is not None
        }
    return out


@dataclass(eq=False)
class Capture:
    """One capture run: resolve ranges, write the header, stream the records."""

    client: dict[str, Any]
    topics: list[str]
    selection: Selection
    limits: Limits
    anonymizer: Anonymizer
    registry: Any | None
    progress: Callable[[int], None] | None = None

    def plan(self, consumer: Consumer) -> tuple[dict[str, int], dict[TP, tuple[int, int]]]:
        bootstrap = str(self.client.get("bootstrap.servers", ""))
        layout = topic_layout(consumer, self.topics, self._errors, bootstrap)
        partitions = [(t, p) for t in self.topics for p in range(layout[t])]
        return layout, resolve(consumer, partitions, self.selection, self.client)

    def run(
        self, out: IO[str] | None, visit: Callable[[dict[str, Any]], None] | None = None
    ) -> CaptureSummary:
        """Write the capture to `out` (or only hand each record to `visit`, for a review)."""
        self._errors: list[KafkaError] = []
        consumer = Consumer({**consumer_config(self.client), "error_cb": self._errors.append})
        try:
            layout, ranges = self.plan(consumer)
            summary = CaptureSummary(ranges)
            write = out.write if out is not None else None
            if write is not None:
                write(dumps(self._header(layout, ranges)) + "\n")

            def schema_line(line: dict[str, Any]) -> None:
                if write is not None:
                    write(dumps(line) + "\n")

            decoder = ValueDecoder(self.registry, schema_line)
            started = time.monotonic()
            for tp in sorted(ranges):
                if self._read(consumer, tp, ranges[tp], decoder, summary, write, visit):
                    break
            summary.seconds = time.monotonic() - started
            return summary
        finally:
            consumer.close()

    def _header(self, layout: dict[str, int], ranges: dict[TP, tuple[int, int]]) -> dict[str, Any]:
        configs = topic_configs(self.client, self.topics)
        return {
            HEADER_KEY: VERSION,
            "topics": {
                topic: {
                    "partitions": layout[topic],
                    "configs": configs.get(topic),
                    "ranges": {
                        str(p): list(span) for (t, p), span in sorted(ranges.items()) if t == topic
                    },
                }
                for topic in self.topics
            },
            "anonymized": {rule.field: rule.text for rule in self.anonymizer.rules},
        }

    def _read(
        self,
        consumer: Consumer,
        tp: TP,
        span: tuple[int, int],
        decoder: ValueDecoder,
        summary: CaptureSummary,
        write: Callable[[str], Any] | None,
        visit: Callable[[dict[str, Any]], None] | None,
    ) -> bool:
        """Read one partition's range; True when a limit stopped the whole capture."""
        start, end = span
        consumer.assign([TopicPartition(tp[0], tp[1], start)])
        count = 0
        position = start
        while True:
            # Never more than is left: consume() waits out its timeout for a batch it
            # cannot fill.
            messages = consumer.consume(max(1, min(_BATCH, end - position)), timeout=1.0)
            for message in messages:
                error = message.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        return self._finish(consumer, tp, summary, count, False)
                    raise CaptureError(f"reading {tp[0]}[{tp[1]}]: {error}")
                offset = int(message.offset() or 0)
                position = offset + 1
                if offset >= end:
                    return self._finish(consumer, tp, summary, count, False)
                entry = self._entry(message, decoder)
                size = len(message.value() or b"") + len(message.key() or b"")
                if self._over_limit(summary, count, size):
                    return self._finish(consumer, tp, summary, count, True)
                summary.bytes += size
                count += 1
                if write is not None:
                    write(dumps(entry) + "\n")
                if visit is not None:
                    visit(entry)
                if self.progress is not None and (summary.total + count) % 10_000 == 0:
                    self.progress(summary.total + count)
                if offset == end - 1:
                    return self._finish(consumer, tp, summary, count, False)

    def _over_limit(self, summary: CaptureSummary, count: int, size: int) -> bool:
        limits = self.limits
        if limits.max_records is not None and summary.total + count >= limits.max_records:
            summary.stopped_by = f"--max-records {limits.max_records}"
            return True
        if limits.max_bytes is not None and summary.bytes + size > limits.max_bytes:
            summary.stopped_by = f"--max-bytes {limits.max_bytes}"
            return True
        return False

    def _finish(
        self, consumer: Consumer, tp: TP, summary: CaptureSummary, count: int, stop: bool
    ) -> bool:
        consumer.unassign()
        summary.records[tp] = count
        return stop

    def _entry(self, message: Any, decoder: ValueDecoder) -> dict[str, Any]:
        topic = message.topic()
        kind, timestamp = message.timestamp()
        key = decoder.decode(message.key(), topic, "key")
        value = decoder.decode(message.value(), topic, "value")
        where = f"{topic}[{message.partition()}]@{message.offset()}"
        key = self._anonymized(key, "key", where)
        value = self._anonymized(value, "value", where)
        headers = []
        for name, data in message.headers() or []:
            encoded = encode_bytes(data)
            if not any(r.where == "header" and r.path[0] == name for r in self.anonymizer.rules):
                headers.append([name, encoded])
                continue
            # A header's rule replaces its whole value, decoded or not.
            original = value_of(encoded) if is_decoded(encoded) else data
            replaced = self.anonymizer.apply({name: original}, "header")
            if name in replaced:
                headers.append([name, _as_entry(encoded, original, replaced[name])])
        return {
            "topic": topic,
            "partition": message.partition(),
            "offset": message.offset(),
            "timestamp": timestamp,
            "timestamp_type": TIMESTAMP_TYPES.get(kind),
            "key": key,
            "value": value,
            "headers": headers,
        }

    def _anonymized(
        self, encoded: dict[str, Any] | None, part: str, where: str
    ) -> dict[str, Any] | None:
        """A key or value with the rules for it applied. Bytes that could not be decoded
        (binary, or Protobuf: JSON, Avro and JSON Schema are read) take a rule for the
        whole key (hashed, faked, dropped, kept), but not one into their fields: that is
        refused, rather than writing the data the user asked to replace (or losing the
        value, as a rule for another part once did)."""
        rules = [rule for rule in self.anonymizer.rules if rule.where == part]
        if not rules or encoded is None:
            return encoded
        if is_decoded(encoded):
            return with_value(encoded, self.anonymizer.apply(value_of(encoded), part))
        fields = [rule.field for rule in rules if rule.path]
        if fields:
            kind = f"schema {encoded['schema_id']}" if "schema_id" in encoded else "binary"
            whole = " (or replace the whole key: --anonymize key=hash)" if part == "key" else ""
            raise CaptureError(
                f"the {part} of {where} is not JSON, Avro or JSON Schema ({kind}), so "
                f"--anonymize {', '.join(fields)} cannot reach into it, and the capture "
                "stops rather than write what you asked to replace: give --schema-registry "
                f"if its schema is Avro or JSON Schema{whole}; Protobuf fields cannot be "
                "anonymized yet"
            )
        original = decode_plain(encoded)
        return _as_entry(encoded, original, self.anonymizer.apply(original, part))


def _as_entry(
    encoded: dict[str, Any] | None, original: Any, replaced: Any
) -> dict[str, Any] | None:
    """The entry for a replaced value: unchanged if kept, text for a hash or a fake of
    bytes (never the original bytes under another name)."""
    if replaced is None:
        return None
    if replaced is original:
        return encoded
    if is_decoded(encoded):
        return with_value(encoded, replaced)
    return {"text": str(replaced)}


def tty_progress() -> Callable[[int], None] | None:
    """A progress line on stderr when it is a terminal (never in a pipe or a log)."""
    if not sys.stderr.isatty():
        return None
    return lambda count: print(f"\rcaptured {count:,} records", end="", file=sys.stderr, flush=True)
