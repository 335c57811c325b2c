"""What an emulator-only fault is: which requests it hits, how often, what it does.

A rule is plain data (so the control interface can list and create rules as
JSON); the hook decides per request whether a rule applies and consumes one of
its `times`. Names are accepted as Kafka spells them (``Produce``,
``NOT_LEADER_OR_FOLLOWER``) or as numbers, so CLI users need no lookup table.
"""

from __future__ import annotations

import difflib
import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from kio.schema.errors import ErrorCode
from kio.schema.index import api_key_map

from kafkatest.emulator.control.errors import InvalidFault

_ids = itertools.count(1)
_API_BY_NAME = {name.replace("_", ""): key for key, name in api_key_map.items()}

#: The kinds of rule the hook knows.
KINDS = ("latency", "drop_connection", "error", "lose_ack")


def api_key(api: int | str) -> int:
    """``Produce``, ``produce``, ``list_offsets``, ``ListOffsets`` or ``0`` -> the API key."""
    if isinstance(api, int) or (isinstance(api, str) and api.isdigit()):
        key = int(api)
        if key not in api_key_map:
            raise InvalidFault(f"unknown Kafka API key {key} (Produce is 0, Fetch 1, Metadata 3)")
        return key
    normalized = re.sub(r"[^a-z]", "", api.lower())
    if normalized not in _API_BY_NAME:
        close = difflib.get_close_matches(normalized, _API_BY_NAME, n=1)
        hint = f"did you mean {api_name(_API_BY_NAME[close[0]])}? " if close else ""
        raise InvalidFault(
            f"unknown Kafka API {api!r} ({hint}e.g. Produce, Fetch, Metadata, 0, 1, 3)"
        )
    return _API_BY_NAME[normalized]


def api_name(key: int) -> str:
    return "".join(part.capitalize() for part in api_key_map.get(key, str(key)).split("_"))


def error_code(error: int | str) -> ErrorCode:
    """``NOT_LEADER_OR_FOLLOWER``, ``not_leader_or_follower`` or ``6`` -> the ErrorCode."""
    try:
        if isinstance(error, int) or (isinstance(error, str) and error.lstrip("-").isdigit()):
            return ErrorCode(int(error))
        return ErrorCode[error.lower()]
    except (KeyError, ValueError):
        names = [code.name for code in ErrorCode]
        close = difflib.get_close_matches(str(error).lower(), names, n=1, cutoff=0.5)
        hint = f"did you mean {close[0].upper()}? " if close else ""
        raise InvalidFault(
            f"unknown Kafka error {error!r} ({hint}e.g. NOT_LEADER_OR_FOLLOWER, 6)"
        ) from None


@dataclass
class Rule:
    """One emulator fault: `kind` applied to requests of API `api_key`.

    `times` is how many requests it still hits (None: until cleared). `topic` and
    `partition` narrow it to requests that touch that topic (and partition).
    """

    kind: str
    api_key: int
    times: int | None = None
    topic: str | None = None
    partition: int | None = None
    delay_ms: int = 0
    error: ErrorCode = ErrorCode.none
    id: int = field(default_factory=lambda: next(_ids))
    #: How many requests it has hit so far.
    hits: int = 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InvalidFault(f"unknown fault kind {self.kind!r}; one of {', '.join(KINDS)}")
        if self.times is not None and self.times < 1:
            raise InvalidFault(f"times must be at least 1 (or None for always), not {self.times}")
        if self.delay_ms < 0:
            raise InvalidFault(f"a latency cannot be negative ({self.delay_ms} ms)")
        if self.partition is not None and self.topic is None:
            raise InvalidFault("a partition needs its topic")

    def describe(self) -> dict[str, Any]:
        """JSON-ready summary, as listed by `Faults.active()` and the control interface."""
        out: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "api": api_name(self.api_key),
            "times": self.times,
            "hits": self.hits,
        }
        if self.topic is not None:
            out["topic"] = self.topic
        if self.partition is not None:
            out["partition"] = self.partition
        if self.kind == "latency":
            out["delay_ms"] = self.delay_ms
        if self.kind == "error":
            out["error"] = self.error.name.upper()
        return out
