"""What clients asked the emulator, for a test to assert on ("the job read with
read_committed", "no more than N ListOffsets per batch").

Off by default (the server holds None and the request path does nothing). On, each
request becomes one `RequestEntry` with its decoded fields as plain data (bytes
become their length, so a Produce costs no copy of its records) and the error codes
of its answer. The log keeps the latest `limit` entries, and the client software
names it remembers per connection are bounded too: a client cannot make it grow.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import uuid
from collections import Counter, deque
from typing import Any

from kio.schema.errors import ErrorCode
from kio.schema.index import api_key_map

from kafkatest.limits import (
    MAX_REQUEST_LOG_BYTES,
    MAX_REQUEST_LOG_ENTRY_BYTES,
    MAX_REQUEST_LOG_STRING,
)

#: How many connections' client software names are remembered (oldest forgotten).
MAX_CONNECTIONS_NAMED = 4096
#: How deep a request or response is walked (kio messages nest a few levels).
MAX_DEPTH = 12
_API_VERSIONS = 18


@dataclasses.dataclass(frozen=True)
class RequestEntry:
    """One request as the broker saw it, and how it was answered."""

    #: Kafka's name for the API ("Fetch", "Produce", "ListOffsets").
    api: str
    version: int
    client_id: str | None
    #: The decoded request fields (nested dicts and lists; bytes as {"bytes": length}).
    request: dict[str, Any]
    #: The non-zero error codes of the answer, by Kafka's name ("OFFSET_OUT_OF_RANGE").
    error_codes: tuple[str, ...]
    #: When it arrived, on the broker's clock (epoch ms).
    time_ms: int
    #: The connection it came on (the broker numbers them) and the client's address.
    connection: int
    peer: str
    broker_id: int
    #: What the client said it is in ApiVersions (librdkafka, apache-kafka-java), if it did.
    client_software: str | None


class RequestLog:
    """The latest `limit` requests (and at most `max_bytes` of them), oldest first."""

    def __init__(self, limit: int = 10_000, max_bytes: int = MAX_REQUEST_LOG_BYTES) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be a positive number of requests, not {limit!r}")
        self.limit = limit
        self.max_bytes = max_bytes
        self._entries: deque[RequestEntry] = deque()
        #: Each entry's estimated size, beside it, and their sum.
        self._sizes: deque[int] = deque()
        self.bytes = 0
        self._software: dict[int, str] = {}
        #: How many requests were ever recorded: a mark taken before a test, so that a
        #: log a session broker keeps on shows that test's requests only (`since`).
        self.recorded = 0

    def record(self, ctx: Any, request: Any, response: Any) -> None:
        """Add one answered request (`ctx` is the server's RequestContext)."""
        if ctx.api_key == _API_VERSIONS:
            name = getattr(request, "client_software_name", None)
            if name:
                self._remember_software(ctx.connection_id, str(name))
        self.recorded += 1
        budget = _Budget(MAX_REQUEST_LOG_ENTRY_BYTES)
        self._entries.append(
            RequestEntry(
                api=kafka_api_name(ctx.api_key),
                version=ctx.api_version,
                client_id=ctx.client_id,
                request=plain(request, 0, budget),
                error_codes=error_names(response),
                time_ms=ctx.state.clock.now_ms(),
                connection=ctx.connection_id,
                peer=ctx.peer,
                broker_id=ctx.broker_id,
                client_software=self._software.get(ctx.connection_id),
            )
        )
        size = _ENTRY_BYTES + budget.spent
        self._sizes.append(size)
        self.bytes += size
        while len(self._entries) > self.limit or (
            self.bytes > self.max_bytes and len(self._entries) > 1
        ):
            self._entries.popleft()
            self.bytes -= self._sizes.popleft()

    def entries(self, api: str | None = None, client_id: str | None = None) -> list[RequestEntry]:
        return [
            entry
            for entry in list(self._entries)
            if (api is None or entry.api == api)
            and (client_id is None or entry.client_id == client_id)
        ]

    def since(self, mark: int) -> tuple[list[RequestEntry], int]:
        """The entries recorded after `recorded` was `mark`, and how many of those the
        bound already dropped."""
        count = max(self.recorded - mark, 0)
        kept = list(self._entries)[-count:] if count else []
        return kept, count - len(kept)

    def _remember_software(self, connection: int, name: str) -> None:
        self._software.pop(connection, None)
        self._software[connection] = name
        while len(self._software) > MAX_CONNECTIONS_NAMED:
            del self._software[next(iter(self._software))]


def kafka_api_name(key: int) -> str:
    """Kafka's name for an API key: 1 -> "Fetch", 2 -> "ListOffsets"."""
    return "".join(part.capitalize() for part in api_key_map.get(key, str(key)).split("_"))


#: What an entry costs beside its request (its own fields), estimated.
_ENTRY_BYTES = 512


class _Budget:
    """Estimated bytes a request's plain form may still take (as CPython holds them:
    a container's header and slots, a string's header and characters, a number)."""

    __slots__ = ("left", "spent")

    def __init__(self, size: int) -> None:
        self.left = size
        self.spent = 0

    def take(self, size: int) -> bool:
        """Take `size`; False once the budget is spent (the caller then summarises)."""
        if self.left <= 0:
            return False
        self.left -= size
        self.spent += size
        return True


def plain(value: Any, depth: int, budget: _Budget) -> Any:
    """A kio message as dicts, lists, numbers and strings (bytes as their length),
    within `budget`: a list past it ends with "... N more", a string longer than
    MAX_REQUEST_LOG_STRING is cut with its length said."""
    if depth > MAX_DEPTH:
        return "..."
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        budget.take(64)
        for field in dataclasses.fields(value):
            budget.take(16)
            out[field.name] = plain(getattr(value, field.name), depth + 1, budget)
        return out
    if isinstance(value, (bytes, bytearray, memoryview)):
        budget.take(96)
        return {"bytes": len(value)}
    if isinstance(value, (tuple, list)):
        items: list[Any] = []
        budget.take(56)
        for index, item in enumerate(value):
            if not budget.take(8):
                items.append(f"... {len(value) - index} more")
                break
            items.append(plain(item, depth + 1, budget))
        return items
    if isinstance(value, str):
        if len(value) > MAX_REQUEST_LOG_STRING:
            value = f"{value[:MAX_REQUEST_LOG_STRING]}... ({len(value)} characters)"
        budget.take(49 + len(value))
        return value
    budget.take(32)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime.timedelta):
        return value // datetime.timedelta(milliseconds=1)
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def error_names(response: Any) -> tuple[str, ...]:
    """The distinct non-zero `error_code`s anywhere in `response`, in order of appearance."""
    found: dict[str, None] = {}
    _collect_errors(response, found, 0)
    return tuple(found)


def _collect_errors(value: Any, found: dict[str, None], depth: int) -> None:
    if depth > MAX_DEPTH or value is None:
        return
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            item = getattr(value, field.name)
            if field.name == "error_code" and isinstance(item, int) and item != 0:
                found[_error_name(item)] = None
            elif isinstance(item, (tuple, list)) or dataclasses.is_dataclass(item):
                _collect_errors(item, found, depth + 1)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _collect_errors(item, found, depth + 1)


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name.upper()
    except ValueError:
        return str(code)


#: Fetch's isolation_level field, by Kafka's name for it.
ISOLATION_LEVELS = {0: "read_uncommitted", 1: "read_committed"}


def summary_lines(entries: list[RequestEntry]) -> list[str]:
    """One line per API and client id, in order of first appearance: how many requests,
    which versions, the error codes answered (with counts) and, for Fetch, the isolation
    levels: what a failed test's report says the job asked the broker."""
    groups: dict[tuple[str, str | None], list[RequestEntry]] = {}
    for entry in entries:
        groups.setdefault((entry.api, entry.client_id), []).append(entry)
    lines = []
    for (api, client_id), group in groups.items():
        versions = sorted({entry.version for entry in group})
        text = f"{api} from {client_id or '(no client id)'}"
        software = next((e.client_software for e in group if e.client_software), None)
        if software:
            text += f" ({software})"
        text += f": {len(group)}x, v{','.join(map(str, versions))}"
        isolation = sorted({level for e in group if (level := isolation_level(e))})
        if isolation:
            text += f", {'/'.join(isolation)}"
        errors = Counter(code for entry in group for code in entry.error_codes)
        if errors:
            text += ", errors " + ", ".join(f"{code} x{n}" for code, n in errors.items())
        lines.append(text)
    return lines


def isolation_level(entry: RequestEntry) -> str | None:
    """A Fetch's (or ListOffsets') isolation level by name; None for other APIs."""
    level = entry.request.get("isolation_level") if entry.api in ("Fetch", "ListOffsets") else None
    if isinstance(level, int) and not isinstance(level, bool):
        return ISOLATION_LEVELS.get(level, str(level))
    return None


def timeline(entries: list[RequestEntry]) -> list[dict[str, Any]]:
    """The entries as plain data for a report's timeline (no decoded request: a
    report stays small and holds no record contents)."""
    return [
        {
            "time_ms": entry.time_ms,
            "api": entry.api,
            "version": entry.version,
            "client_id": entry.client_id,
            "connection": entry.connection,
            "broker_id": entry.broker_id,
            "isolation_level": isolation_level(entry),
            "error_codes": list(entry.error_codes),
        }
        for entry in entries
    ]
