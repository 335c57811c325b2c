"""Seed data kept next to the tests, in JSON Lines, JSON or YAML files.

Realistic fixtures (keys, headers, partitions, timestamps) are easier to review
as data than as code. Each entry is a record envelope or a plain value, with the
same rule as in Python (see `items.is_envelope`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kafkatest._ground import bounded_json, bounded_yaml
from kafkatest.limits import MAX_CAPTURE_LINE_BYTES, MAX_SEED_FILE_BYTES

SUFFIXES = (".jsonl", ".ndjson", ".json", ".yaml", ".yml")


def load_fixture(path: str | os.PathLike[str]) -> list[Any]:
    """Read the entries of a fixture file: one per line (JSON Lines) or a top-level list.

    The format follows the suffix: ``.jsonl``/``.ndjson``, ``.json``, ``.yaml``/``.yml``.
    """
    file = Path(path)
    suffix = file.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"{file}: fixture files end in one of {SUFFIXES}")
    size = file.stat().st_size
    if size > MAX_SEED_FILE_BYTES:
        raise ValueError(f"{file}: {size} bytes is over the limit of {MAX_SEED_FILE_BYTES}")
    if suffix in (".jsonl", ".ndjson"):
        return _json_lines(file)
    text = file.read_text(encoding="utf-8")
    try:
        data = bounded_json.loads(text) if suffix == ".json" else bounded_yaml.load(text)
    except ValueError as exc:
        raise ValueError(f"{file}: {exc}") from None
    if not isinstance(data, list):
        raise ValueError(
            f"{file}: expected a list of entries at the top, got {type(data).__name__}"
        )
    return data


#: How much of a JSON Lines fixture is read at a time.
_CHUNK_BYTES = 1 << 20


def _json_lines(file: Path) -> list[Any]:
    """Each non-blank line's JSON, read a chunk at a time: a chunk of blank lines is
    skipped whole, in C (a billion newlines once took minutes and tens of GB), and no
    line may pass MAX_CAPTURE_LINE_BYTES."""
    entries: list[Any] = []
    number = 1  # the line `pending` starts on
    pending = b""
    with file.open("rb") as stream:
        while chunk := stream.read(_CHUNK_BYTES):
            data = pending + chunk
            cut = data.rfind(b"\n") + 1
            number = _parse(file, data[:cut], number, entries)
            pending = data[cut:]
            if len(pending) > MAX_CAPTURE_LINE_BYTES:
                raise ValueError(f"{file}:{number}: longer than {MAX_CAPTURE_LINE_BYTES} bytes")
    _parse(file, pending, number, entries)
    return entries


def _parse(file: Path, block: bytes, number: int, entries: list[Any]) -> int:
    """Parse the lines of `block` (the first is line `number`) into `entries`; the
    number of the line after it."""
    if not block.strip():  # blank lines only: counted, not split
        return number + block.count(b"\n")
    lines = block.split(b"\n")
    if block.endswith(b"\n"):
        lines.pop()  # what follows the last newline is the next block's
    for line in lines:
        if line.strip():
            try:
                entries.append(bounded_json.loads(line))
            except bounded_json.JsonRefused as exc:
                raise ValueError(f"{file}:{number}: {exc}") from None
        number += 1
    return number
