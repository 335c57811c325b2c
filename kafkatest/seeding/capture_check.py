"""A capture file checked whole before `seed` writes a record of it.

Of 45 malformed files tried (issue 44), a third ended in a bare exception with no
line (an empty gzip, a null line, a timestamp of the wrong type, bad UTF-8 or gzip),
others seeded the wrong thing in silence (partition -1, 1.7 or true in another
partition, base64 with junk altered, a blank first line skipping the header check),
and a truncated gzip left 10,000 records seeded before its error. Here every line is
read within `kafkatest.limits` (`capture_file.read_lines`) and every field checked
(`check_capture`): an error names the file, the line and the field, and since the
whole file is checked first, a bad file seeds nothing.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from kafkatest.limits import MAX_CLOCK_MS, MAX_INT, MAX_OFFSET, MAX_PARTITIONS
from kafkatest.seeding.capture_file import (
    TIMESTAMP_TYPES,
    VALUE_FORMS,
    CaptureFormatError,
    is_header,
    read_lines,
    restore_bytes,
)

_SCHEMA_TYPES = ("AVRO", "JSON", "PROTOBUF")


@dataclass
class CaptureOutline:
    """What a checked capture holds: its topic and layout, and what its records use."""

    topic: str
    partitions: int
    #: partition -> [start, end) of the offsets read, from the header.
    ranges: dict[int, tuple[int, int]]
    records: int = 0
    #: The highest partition a record names (-1: no record).
    last_partition: int = -1
    #: Each schema line's schema type, by its id.
    schemas: dict[int, str] = field(default_factory=dict)


def check_capture(path: str | os.PathLike[str]) -> CaptureOutline:
    """Read the whole file and check every line; its outline, or CaptureFormatError
    naming the line and the field that is wrong."""
    outline: CaptureOutline | None = None
    last_offsets: dict[int, int] = {}
    parsed: dict[int, Any] = {}
    for number, entry in read_lines(path):
        where = f"{path}:{number}"
        if outline is None:
            outline = _check_header(entry, where)
            continue
        if is_header(entry):
            raise CaptureFormatError(f"{where}: a second header (a capture has one, on line 1)")
        if "schema" in entry:
            _check_schema_line(entry, where, outline, parsed)
            continue
        _check_record(entry, where, outline, last_offsets, parsed)
    assert outline is not None  # read_lines refuses a file without its header line
    return outline


def _fail(where: str, name: str, problem: str) -> CaptureFormatError:
    return CaptureFormatError(f"{where}: {name}: {problem}")


def _whole(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_header(entry: dict[str, Any], where: str) -> CaptureOutline:
    topics = entry.get("topics")
    if not isinstance(topics, dict) or len(topics) != 1:
        count = len(topics) if isinstance(topics, dict) else 0
        raise _fail(
            where, "topics", f"a capture to replay holds one topic, this one {count}: "
            "capture (and replay) one topic per file"
        )  # fmt: skip
    ((topic, layout),) = topics.items()
    if not isinstance(layout, dict):
        raise _fail(where, f"topics.{topic}", "a mapping of partitions, configs and ranges")
    partitions = layout.get("partitions")
    if not _whole(partitions) or not 1 <= partitions <= MAX_PARTITIONS:
        raise _fail(
            where,
            f"topics.{topic}.partitions",
            f"a partition count from 1 to {MAX_PARTITIONS}, not {partitions!r}",
        )
    ranges: dict[int, tuple[int, int]] = {}
    raw_ranges = layout.get("ranges") or {}
    if not isinstance(raw_ranges, dict):
        raise _fail(where, f"topics.{topic}.ranges", "a mapping of partition to [start, end]")
    for key, span in raw_ranges.items():
        name = f"topics.{topic}.ranges.{key}"
        if not (isinstance(key, str) and key.isascii() and key.isdigit()):
            raise _fail(where, name, "a partition number")
        index = int(key)
        if index >= partitions:
            raise _fail(where, name, f"the topic has partitions 0..{partitions - 1}")
        if (
            not isinstance(span, list)
            or len(span) != 2
            or not all(_whole(v) for v in span)
            or not 0 <= span[0] <= span[1] <= MAX_OFFSET
        ):
            raise _fail(
                where, name, f"[start, end] offsets with 0 <= start <= end <= {MAX_OFFSET}, "
                f"not {span!r}"
            )  # fmt: skip
        ranges[index] = (span[0], span[1])
    return CaptureOutline(str(topic), partitions, ranges)


def _check_schema_line(
    entry: dict[str, Any], where: str, outline: CaptureOutline, parsed: dict[int, Any]
) -> None:
    schema_id, text = entry.get("schema_id"), entry.get("schema")
    schema_type = entry.get("schema_type", "AVRO")
    if not _whole(schema_id) or not 0 <= schema_id <= MAX_INT:
        raise _fail(where, "schema_id", f"a schema id (0 to {MAX_INT}), not {schema_id!r}")
    if not isinstance(text, str):
        raise _fail(where, "schema", "the schema's text")
    if schema_type not in _SCHEMA_TYPES:
        raise _fail(where, "schema_type", f"one of {', '.join(_SCHEMA_TYPES)}")
    if schema_type == "AVRO":
        from fastavro import parse_schema

        try:
            parsed[schema_id] = parse_schema(json.loads(text))
        except Exception as exc:  # fastavro's many errors: the schema is not one
            raise _fail(where, "schema", f"not an Avro schema: {exc}") from None
    outline.schemas[schema_id] = schema_type


def _check_record(
    entry: dict[str, Any],
    where: str,
    outline: CaptureOutline,
    last_offsets: dict[int, int],
    parsed: dict[int, Any],
) -> None:
    if entry.get("topic") != outline.topic:
        raise _fail(
            where, "topic", f"the header's topic {outline.topic!r}, not {entry.get('topic')!r}"
        )
    partition = entry.get("partition")
    if not _whole(partition) or not 0 <= partition < outline.partitions:
        raise _fail(
            where,
            "partition",
            f"a partition of the topic (0..{outline.partitions - 1}), not {partition!r}",
        )
    offset = entry.get("offset")
    if not _whole(offset) or not 0 <= offset <= MAX_OFFSET:
        raise _fail(where, "offset", f"an offset from 0 to {MAX_OFFSET}, not {offset!r}")
    span = outline.ranges.get(partition)
    if span is not None and not span[0] <= offset < span[1]:
        raise _fail(where, "offset", f"{offset} is outside the range read, [{span[0]}, {span[1]})")
    if offset <= last_offsets.get(partition, -1):
        raise _fail(
            where,
            "offset",
            f"{offset} comes after {last_offsets[partition]} in partition {partition}",
        )
    last_offsets[partition] = offset
    timestamp = entry.get("timestamp")
    if timestamp is not None and (not _whole(timestamp) or not -1 <= timestamp <= MAX_CLOCK_MS):
        raise _fail(
            where, "timestamp", f"epoch milliseconds up to {MAX_CLOCK_MS} (or null), "
            f"not {timestamp!r}"
        )  # fmt: skip
    if entry.get("timestamp_type") not in TIMESTAMP_TYPES.values():
        raise _fail(where, "timestamp_type", "create, log_append or null")
    for part in ("key", "value"):
        _check_value(entry.get(part), where, part, outline, parsed)
    headers = entry.get("headers") or []
    if not isinstance(headers, list):
        raise _fail(where, "headers", "a list of [name, value]")
    for index, header in enumerate(headers):
        if not (isinstance(header, list) and len(header) == 2 and isinstance(header[0], str)):
            raise _fail(where, f"headers[{index}]", "a [name, value] pair")
        _check_value(header[1], where, f"headers[{index}]", outline, parsed, schemas=False)
    outline.records += 1
    outline.last_partition = max(outline.last_partition, partition)


def _check_value(
    encoded: Any,
    where: str,
    name: str,
    outline: CaptureOutline,
    parsed: dict[int, Any],
    schemas: bool = True,
) -> None:
    """A key, value or header value: null or one form (see `capture_file`)."""
    if encoded is None:
        return
    if not isinstance(encoded, dict):
        raise _fail(where, name, f"null or an object with one of {', '.join(VALUE_FORMS)}")
    forms = [form for form in VALUE_FORMS if form in encoded]
    extra = set(encoded) - {*VALUE_FORMS, "schema_id"}
    if len(forms) != 1 or extra:
        raise _fail(where, name, f"exactly one of {', '.join(VALUE_FORMS)}, not {sorted(encoded)}")
    (form,) = forms
    data = encoded[form]
    if form == "text" and not isinstance(data, str):
        raise _fail(where, f"{name}.text", "a string")
    if form == "base64":
        if not isinstance(data, str):
            raise _fail(where, f"{name}.base64", "a base64 string")
        try:
            base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise _fail(where, f"{name}.base64", "not base64 (only A-Z a-z 0-9 + / =)") from None
    if "schema_id" not in encoded:
        if form == "avro":
            raise _fail(where, name, "an avro value names its schema_id")
        return
    schema_id = encoded["schema_id"]
    if not schemas or not _whole(schema_id) or schema_id not in outline.schemas:
        raise _fail(where, f"{name}.schema_id", f"{schema_id!r} is not a schema line above it")
    if form == "avro":
        if outline.schemas[schema_id] != "AVRO":
            raise _fail(
                where, name, f"schema {schema_id} is {outline.schemas[schema_id]}, not AVRO"
            )
        _check_avro(data, parsed[schema_id], where, name)


def _check_avro(value: Any, schema: Any, where: str, name: str) -> None:
    from fastavro.validation import validate

    try:
        validate(restore_bytes(value), schema, raise_errors=True)
    except Exception as exc:  # fastavro's ValidationError, or a value it cannot walk
        raise _fail(where, f"{name}.avro", f"does not match its schema: {exc}") from None
