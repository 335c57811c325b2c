"""Seed data kept next to the tests, in JSON Lines, JSON or YAML files.

Realistic fixtures (keys, headers, partitions, timestamps) are easier to review
as data than as code. Each entry is a record envelope or a plain value, with the
same rule as in Python (see `items.is_envelope`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from kafkatest import bounded_json, bounded_yaml
from kafkatest.limits import MAX_SEED_FILE_BYTES

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
    text = file.read_text(encoding="utf-8")
    if suffix in (".jsonl", ".ndjson"):
        return _json_lines(file, text)
    try:
        data = bounded_json.loads(text) if suffix == ".json" else bounded_yaml.load(text)
    except ValueError as exc:
        raise ValueError(f"{file}: {exc}") from None
    if not isinstance(data, list):
        raise ValueError(
            f"{file}: expected a list of entries at the top, got {type(data).__name__}"
        )
    return data


#: A line from its first character that is not white space: blank lines are skipped
#: without a Python step each (a billion newlines once took minutes and tens of GB).
_FILLED_LINE = re.compile(r"\S[^\r\n]*")


def _json_lines(file: Path, text: str) -> list[Any]:
    entries = []
    number, counted_to = 1, 0
    for match in _FILLED_LINE.finditer(text):
        number += text.count("\n", counted_to, match.start())
        counted_to = match.start()
        try:
            entries.append(bounded_json.loads(match.group()))
        except bounded_json.JsonRefused as exc:
            raise ValueError(f"{file}:{number}: {exc}") from None
    return entries
