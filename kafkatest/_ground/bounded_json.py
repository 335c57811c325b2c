"""JSON read with kafkatest's bounds: nesting, and numbers Python will not convert.

`json.loads` recurses once per level (a deep array ends in RecursionError, and code
that walks the value afterwards recurses too), and refuses an integer of more than
4,300 digits with a ValueError that says nothing of where. `loads` turns both into
one error that says what was wrong, and refuses nesting deeper than
`limits.MAX_NESTING` before any caller walks the value.
"""

from __future__ import annotations

import json
from typing import Any

from kafkatest.limits import MAX_NESTING


class JsonRefused(ValueError):
    """Text that is not JSON kafkatest reads; the message says why."""


def loads(text: str | bytes) -> Any:
    """The JSON value of `text`, or JsonRefused."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise JsonRefused(f"it nests deeper than {MAX_NESTING} levels") from None
    except json.JSONDecodeError as exc:
        raise JsonRefused(f"not JSON: {exc.msg} (column {exc.colno})") from None
    except ValueError as exc:  # an integer past Python's digit limit, bad UTF-8
        raise JsonRefused(str(exc).split(";")[0]) from None
    check_nesting(value)
    return value


def check_nesting(value: Any, limit: int = MAX_NESTING) -> None:
    """Refuse a value whose lists and objects nest deeper than `limit` (no recursion)."""
    pending: list[tuple[Any, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth >= limit:
            raise JsonRefused(f"it nests deeper than {limit} levels")
        pending.extend((child, depth + 1) for child in children)
