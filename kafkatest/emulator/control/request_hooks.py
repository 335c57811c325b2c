"""Request hooks: a test's own function decides how the emulator treats a request.

kfake's idea (`ControlKey`) in Python: `fn(request)` sees each matching decoded
request on the broker's thread and returns what to do with it:

* ``None``: let it through (the fault rules and then the handler see it);
* an error code (``"OFFSET_OUT_OF_RANGE"``, an `ErrorCode` or its number): the
  request is answered with it (only the hook's topic when it names one);
* a response object (a kio `...Response`): sent as the answer;
* ``DELAY(seconds)``: wait, then let it through;
* ``DROP``: close the client's connection without answering;
* ``HOLD``: keep it waiting until the test calls `release_held()`.

Hooks live in `InjectedFaults` in one list with the fault rules, which are hooks too
(`InjectedFaults.add` wraps each `Rule` in one), and are consulted first. A hook
that raises closes that client's connection and keeps the error for the test
(`RequestHook.errors`): a bug in a test's function must not take the broker down.
"""

from __future__ import annotations

import itertools
import logging
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.control.errors import InvalidFault
from kafkatest.emulator.control.rules import api_key, api_name, error_code
from kafkatest.emulator.protocol.request_scope import touches
from kafkatest.emulator.server.context import RequestContext

log = logging.getLogger("kafkatest.faults")

#: How many errors a failing hook keeps (the first ones say the most).
MAX_ERRORS_KEPT = 10
#: The longest DELAY a hook may ask for (it holds a request that long).
MAX_DELAY_S = 600.0


class _Sentinel:
    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


#: Close the client's connection without answering.
DROP = _Sentinel("DROP")
#: Keep the request waiting until `release_held()`.
HOLD = _Sentinel("HOLD")
#: Run the handler (its effects stay) and close the connection instead of answering:
#: a lost acknowledgement (the `lose_ack` fault rule's answer).
LOSE_ACK = _Sentinel("LOSE_ACK")

#: When a hook is consulted: the test's hooks first, then latency rules (each delays
#: the request and lets it on), then the other rules (the first that matches decides);
#: in the order they were added within each.
FIRST, DELAYS, DECIDES = 0, 1, 2


@dataclass(frozen=True)
class DELAY:
    """Wait `seconds`, then let the request through."""

    seconds: float

    def __post_init__(self) -> None:
        if not isinstance(self.seconds, (int, float)) or isinstance(self.seconds, bool):
            raise InvalidFault(f"DELAY takes seconds as a number, not {self.seconds!r}")
        if not math.isfinite(self.seconds) or not 0 <= self.seconds <= MAX_DELAY_S:
            raise InvalidFault(f"DELAY must be 0 to {MAX_DELAY_S:.0f} seconds, not {self.seconds}")


_ids = itertools.count(1)


@dataclass(eq=False)
class RequestHook:
    """One `on_request` hook: which requests it sees and what it has done."""

    api: str | int
    fn: Callable[[Any], Any]
    topic: str | None = None
    client_id: str | None = None
    #: How many requests it sees before it is spent (None: until removed).
    times: int | None = None
    id: int = field(default_factory=lambda: next(_ids))
    #: Requests it has seen.
    calls: int = 0
    #: What `fn` raised (the first `MAX_ERRORS_KEPT`), each closing that connection.
    errors: list[BaseException] = field(default_factory=list)
    api_key: int = field(init=False)
    #: Narrows `topic` to one partition (the fault rules').
    partition: int | None = None
    #: `FIRST`, `DELAYS` or `DECIDES`: where it stands among the others.
    phase: int = FIRST
    #: The fault rule it carries out (None: a test's `on_request` hook); its `hits`
    #: follow `calls`.
    rule: Any = None
    #: Set by `InjectedFaults.add_hook`, so that `remove` finds its way back.
    _owner: Any = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.api, bool) or not isinstance(self.api, (int, str)):
            raise InvalidFault(
                f'on_request takes an API name or key ("Fetch", 1), not {self.api!r}'
            )
        self.api_key = api_key(self.api)
        self.api = api_name(self.api_key)
        if not callable(self.fn):
            raise InvalidFault(f"on_request needs a function of the request, not {self.fn!r}")
        if self.times is not None and (
            isinstance(self.times, bool) or not isinstance(self.times, int) or self.times < 1
        ):
            raise InvalidFault(f"times must be a positive number of requests, not {self.times!r}")

    @property
    def fired(self) -> bool:
        """Whether it has seen a request (as a kfake fault handle says it ran)."""
        return self.calls > 0

    @property
    def spent(self) -> bool:
        return self.times is not None and self.calls >= self.times

    def matches(self, ctx: RequestContext, request: Any) -> bool:
        if ctx.api_key != self.api_key or self.spent:
            return False
        if self.client_id is not None and ctx.client_id != self.client_id:
            return False
        return self.topic is None or touches(request, self.topic, self.partition, ctx.state)

    def take(self) -> bool:
        """Count one request against `times`; False if another took the last one."""
        with self._lock:
            if self.spent:
                return False
            self.calls += 1
            if self.rule is not None:
                self.rule.hits = self.calls
            return True

    def failed(self, error: BaseException) -> None:
        with self._lock:
            if len(self.errors) < MAX_ERRORS_KEPT:
                self.errors.append(error)

    def remove(self) -> None:
        """Stop seeing requests (safe to call twice)."""
        if self._owner is not None:
            self._owner.remove_hook(self)

    def __enter__(self) -> RequestHook:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def as_error_code(answer: Any) -> ErrorCode | None:
    """The ErrorCode a hook answered with, or None if `answer` is not one."""
    if isinstance(answer, ErrorCode):
        return answer
    if isinstance(answer, bool):
        return None
    if isinstance(answer, (int, str)):
        return error_code(answer)
    return None
