"""Seed data kept next to the tests, in JSON Lines, JSON or YAML files.

Realistic fixtures (keys, headers, partitions, timestamps) are easier to review
as data than as code. Each entry is a record envelope or a plain value, with the
same rule as in Python (see `items.is_envelope`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import yaml

SUFFIXES = (".jsonl", ".ndjson", ".json", ".yaml", ".yml")


def load_fixture(path: str | os.PathLike[str]) -> list[Any]:
    """Read the entries of a fixture file: one per line (JSON Lines) or a top-level list.

    The format follows the suffix: ``.jsonl``/``.ndjson``, ``.json``, ``.yaml``/``.yml``.
    """
    file = Path(path)
    suffix = file.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"{file}: fixture files end in one of {SUFFIXES}")
    text = file.read_text(encoding="utf-8")
    if suffix in (".jsonl", ".ndjson"):
        return _json_lines(file, text)
    data = json.loads(text) if suffix == ".json" else yaml.safe_load(text)
    if not isinstance(data, list):
        raise ValueError(
            f"{file}: expected a list of entries at the top, got {type(data).__name__}"
        )
    return data


def _json_lines(file: Path, text: str) -> list[Any]:
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append(json.loads(line))
        except ValueError as exc:
            raise ValueError(f"{file}:{number}: not JSON: {exc}") from None
    return entries
