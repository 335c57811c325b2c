"""The capture file: JSON Lines a human can read and `seed` can replay (docs/how-to/capture.md).

Its lines are declared below (`HEADER`, `SCHEMA_LINE`, `RECORD_LINE`, `VALUE_FORMS`),
which the checks (`capture_check`) and the reference page (docs/reference/capture-files.md)
take their fields from. A name ending ``.gz`` is gzip-compressed (with no time stamp, so
one capture gives one file); ``-`` is standard output.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import io
import json
import os
import re
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from kafkatest._ground import bounded_json
from kafkatest.limits import MAX_CAPTURE_LINE_BYTES, MAX_SEED_FILE_BYTES

VERSION = 1
HEADER_KEY = "kafkatest_capture"
TIMESTAMP_TYPES = {0: None, 1: "create", 2: "log_append"}
#: Line 1, the header: what each field holds.
HEADER = {
    HEADER_KEY: f"the format's version, {VERSION}",
    "topics": '{name: {"partitions": n, "configs": {...}, "ranges": {"<p>": [start, end]}}}:'
    " the topic read (one to replay), its partition count, the configs set on it and the"
    " offsets read of each partition, end exclusive",
    "anonymized": "{field: rule}: the anonymization rules the capture applied",
}
#: A schema line, before the first record that uses the schema.
SCHEMA_LINE = {
    "schema_id": "the id the source registry gave it (records name it)",
    "schema_type": "AVRO (the default), JSON or PROTOBUF",
    "subject": "the subject it was read for, <topic>-value or <topic>-key",
    "schema": "the schema's text",
}
#: A record line, in the order read (topic, partition, offset).
RECORD_LINE = {
    "topic": "the header's topic",
    "partition": "its partition",
    "offset": "its offset, rising within the partition (inside the header's range, if any)",
    "timestamp": "epoch milliseconds, or null",
    "timestamp_type": "create, log_append or null",
    "key": "null or one of the value forms",
    "value": "null or one of the value forms",
    "headers": "a list of [name, null or a value form without schema_id]",
}
#: How a key, value or header value is written: one of these (with ``schema_id`` when it
#: was in Confluent's framing), the most readable that gives the bytes back.
VALUE_FORMS = {
    "json": "UTF-8 JSON, as JSON (with schema_id: JSON Schema's framing)",
    "text": "UTF-8 that is not JSON (or not written back byte for byte as JSON)",
    "base64": "anything else (with schema_id: Protobuf, kept as bytes)",
    "avro": 'Avro decoded with the schema line schema_id names; bytes in it as {"$bytes": base64}',
}
#: Blank lines `is_capture_file` reads past to find the first line.
_BLANK_LINES_LOOKED_PAST = 1_000
#: First characters of a JSON text (anything else is stored as text without a parse).
_JSON_START = frozenset('{["-0123456789tfn')


class CaptureFormatError(ValueError):
    """A file is not a capture kafkatest can read (with the line that is wrong)."""


def encode_bytes(data: bytes | None) -> dict[str, Any] | None:
    """Bytes as the most readable form that gives them back: JSON, text, else base64."""
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}
    if text[:1] not in _JSON_START:
        return {"text": text}  # most keys and headers: no parse attempt to pay for
    try:
        parsed = bounded_json.loads(text)
    except bounded_json.JsonRefused:  # not JSON, or nested past MAX_NESTING: the exact text
        return {"text": text}
    if isinstance(parsed, (dict, list)) or _compact(parsed) == text:
        return {"json": parsed}
    return {"text": text}  # " 1" or "1e3": JSON, but kept as the exact text


def _compact(value: Any) -> str:
    return _escape_surrogates(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


#: A UTF-16 surrogate alone: valid in JSON text as an escape (``"\ud800"``), which
#: json.loads reads into a str that no UTF-8 encoder writes.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogates(text: str) -> str:
    """`text` (JSON) with any lone surrogate written as its escape again: the JSON a
    producer sent as ``{"a":"\\ud800"}`` is stored, written and replayed as those bytes."""
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def restore_bytes(value: Any) -> Any:
    """An Avro form's ``{"$bytes": base64}`` back to bytes, inside any value."""
    if isinstance(value, dict):
        if set(value) == {"$bytes"}:
            return base64.b64decode(value["$bytes"])
        return {k: restore_bytes(v) for k, v in value.items()}
    if isinstance(value, list):
        return [restore_bytes(v) for v in value]
    return value


def decode_plain(encoded: dict[str, Any] | None) -> bytes | None:
    """The bytes of a JSON, text or base64 form (Avro needs its schema: see replay)."""
    if encoded is None:
        return None
    if "json" in encoded:
        return _compact(encoded["json"]).encode()
    if "text" in encoded:
        return str(encoded["text"]).encode("utf-8")
    if "base64" in encoded:
        return base64.b64decode(encoded["base64"])
    raise CaptureFormatError(f"no json, text or base64 in {sorted(encoded)}")


def dumps(entry: dict[str, Any]) -> str:
    """One line: compact, keys in a fixed order, so equal captures are equal bytes."""
    line = json.dumps(entry, separators=(",", ":"), ensure_ascii=False, default=_json_default)
    return _escape_surrogates(line)


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    return str(value)


@contextlib.contextmanager
def open_output(target: str) -> Iterator[IO[str]]:
    """A text stream to `target` (``-``: standard output; ``.gz``: gzip), written as it goes."""
    if target == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    path = Path(target)
    partial = path.with_name(f".{path.name}.partial")
    raw = partial.open("wb")
    try:
        stream: Any = raw
        if path.suffix == ".gz":
            stream = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0)
        with io.TextIOWrapper(stream, encoding="utf-8", newline="\n") as text:
            yield text
    except BaseException:
        raw.close()
        partial.unlink(missing_ok=True)
        raise
    raw.close()
    os.replace(partial, path)  # a capture cut short leaves no file that looks whole


def read_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, entry) of each line of a capture file, the header checked first.

    Read as bytes within `kafkatest.limits`: a line of more than
    MAX_CAPTURE_LINE_BYTES, or more than MAX_SEED_FILE_BYTES in all once decompressed
    (a gzip bomb), is refused there; each line must be UTF-8 JSON holding an object,
    and no line may be empty (the header is line 1, never skipped). A gzip that is not
    one, or is cut short, is refused with the line it reached."""
    file = Path(path)
    with _opened(file) as stream:
        total = 0
        number = 0
        while True:
            try:
                raw = stream.readline(MAX_CAPTURE_LINE_BYTES + 1)
            except (EOFError, OSError, zlib.error) as exc:
                raise CaptureFormatError(
                    f"{file}:{number + 1}: the gzip stream {_gzip_problem(exc)}"
                ) from None
            if not raw:
                if number == 0:
                    raise CaptureFormatError(f"{file}: empty: a capture starts with its header")
                return
            number += 1
            total += len(raw)
            if len(raw) > MAX_CAPTURE_LINE_BYTES:
                raise CaptureFormatError(
                    f"{file}:{number}: longer than {MAX_CAPTURE_LINE_BYTES} bytes"
                )
            if total > MAX_SEED_FILE_BYTES:
                raise CaptureFormatError(
                    f"{file}:{number}: the file passes {MAX_SEED_FILE_BYTES} bytes (decompressed)"
                )
            yield number, _entry(file, number, raw)


def _entry(file: Path, number: int, raw: bytes) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CaptureFormatError(f"{file}:{number}: not UTF-8 (byte {exc.start + 1})") from None
    if not text.strip():
        raise CaptureFormatError(f"{file}:{number}: an empty line (a capture has none)")
    try:
        entry = bounded_json.loads(text)
    except bounded_json.JsonRefused as exc:
        raise CaptureFormatError(f"{file}:{number}: {exc}") from None
    if not isinstance(entry, dict):
        raise CaptureFormatError(
            f"{file}:{number}: a line holds a JSON object, not {json.dumps(entry)[:40]}"
        )
    if number == 1 and not is_header(entry):
        raise CaptureFormatError(f"{file}:1: not a kafkatest capture header")
    return entry


def _opened(file: Path) -> Any:
    """The file as bytes, decompressed as it is read when it is a gzip."""
    try:
        return gzip.open(file, "rb") if file.suffix == ".gz" else file.open("rb")
    except OSError as exc:
        raise CaptureFormatError(f"{file}: {exc.strerror or exc}") from None


def _gzip_problem(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return "ends before its end (the file is truncated)"
    if isinstance(exc, gzip.BadGzipFile):
        return "is not gzip"
    return f"is corrupt ({exc})"


def is_header(entry: Any) -> bool:
    return isinstance(entry, dict) and entry.get(HEADER_KEY) == VERSION


def is_capture_file(path: str | os.PathLike[str]) -> bool:
    """Whether `path` starts with a capture header (so `seed` replays it)."""
    file = Path(path)
    if file.name.endswith((".jsonl.gz", ".ndjson.gz")):
        return True
    if file.suffix not in (".jsonl", ".ndjson"):
        return False
    with file.open("rb") as stream:
        # The first line with something on it: a capture with blank lines before its
        # header is still a capture (refused as one), not fixture data to seed.
        for _ in range(_BLANK_LINES_LOOKED_PAST):
            first = stream.readline(MAX_CAPTURE_LINE_BYTES + 1)
            if first.strip() or not first:
                break
    try:
        return is_header(bounded_json.loads(first))
    except ValueError:  # JsonRefused: not a capture's header, so a fixture file
        return False
