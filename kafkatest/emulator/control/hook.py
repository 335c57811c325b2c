"""The emulator's fault hook: the one place where injected faults meet requests.

The emulator server asks `before_dispatch` about every request; this hook holds
the rules a test added (latency, dropped connections, error answers, lost
acknowledgements) and the pause gate. Rules are added and removed from the test
thread while the hook runs on the emulator's loop, so they sit behind a lock
that is never held across an await.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from kio.static.constants import EntityType

from kafkatest.emulator.control.errors import InvalidFault
from kafkatest.emulator.control.request_hooks import DELAY, DROP, HOLD, RequestHook, as_error_code
from kafkatest.emulator.control.rules import Rule
from kafkatest.emulator.protocol.error_responses import error_response, merge_responses
from kafkatest.emulator.protocol.request_scope import cut, touches
from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.faults import FaultDecision, FaultHook
from kafkatest.emulator.server.handlers import load_handlers

log = logging.getLogger("kafkatest.faults")

#: A round-trip time longer than this (a minute) is a typo, and would outlast clients'
#: request timeouts anyway.
MAX_RTT_MS = 60_000


class InjectedFaults:
    """A `FaultHook` driven by rules; requests no rule takes go to `fallback`."""

    def __init__(self, fallback: FaultHook | None = None) -> None:
        self.fallback = fallback
        self._rules: list[Rule] = []
        #: The test's `on_request` functions, consulted before the rules.
        self._hooks: list[RequestHook] = []
        self._lock = threading.Lock()
        #: Set when the test releases what hooks HOLD (created on the loop thread).
        self._released: asyncio.Event | None = None
        self._held_loop: asyncio.AbstractEventLoop | None = None
        #: Set while paused; requests wait on it (created and set on the loop thread).
        self._resumed: asyncio.Event | None = None
        #: Round-trip time per emulated broker id (None: every broker), in seconds:
        #: librdkafka's mock cluster's per-broker rtt, applied to every answer.
        self._rtt_s: dict[int | None, float] = {}

    # -- rules (any thread) -----------------------------------------------------------

    def add(self, rule: Rule) -> Rule:
        with self._lock:
            self._rules.append(rule)
        return rule

    def remove(self, rule_id: int) -> bool:
        with self._lock:
            before = len(self._rules)
            self._rules = [r for r in self._rules if r.id != rule_id]
            return len(self._rules) < before

    def set_rtt(self, ms: float, broker_id: int | None = None) -> None:
        """Delay every answer of `broker_id` (None: of every broker) by `ms` (any
        thread); 0 removes it. A node's own setting wins over the every-broker one."""
        if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not 0 <= ms <= MAX_RTT_MS:
            raise InvalidFault(f"rtt_ms must be a number of milliseconds in [0, {MAX_RTT_MS}]")
        with self._lock:
            if broker_id is None:
                self._rtt_s = {}
            if ms:
                self._rtt_s[broker_id] = ms / 1000
            else:
                self._rtt_s.pop(broker_id, None)

    def rtt_ms(self, broker_id: int | None = None) -> float:
        """The round-trip time `broker_id`'s answers take (0: none)."""
        with self._lock:
            seconds = self._rtt_s.get(broker_id, self._rtt_s.get(None, 0.0))
        return seconds * 1000

    def clear_rules(self) -> None:
        """Remove every rule, every request hook and the round-trip time (a test's
        faults end with it)."""
        with self._lock:
            self._rules = []
            self._rtt_s = {}
            hooks, self._hooks = self._hooks, []
        for hook in hooks:
            hook._owner = None
        self.release_held()  # nothing may stay held by a hook that is gone

    def add_hook(self, hook: RequestHook) -> RequestHook:
        with self._lock:
            self._hooks.append(hook)
            hook._owner = self
        return hook

    def remove_hook(self, hook: RequestHook) -> None:
        with self._lock:
            self._hooks = [h for h in self._hooks if h is not hook]
            hook._owner = None
            others_hold = bool(self._hooks)
        if not others_hold:
            self.release_held()

    def release_held(self) -> None:
        """Let every request a hook answered HOLD go on (any thread)."""
        with self._lock:
            released, self._released = self._released, None
            loop = self._held_loop
        if released is not None and loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(released.set)

    def rules(self) -> list[Rule]:
        """Rules that still apply (spent ones are dropped as they run out)."""
        with self._lock:
            return list(self._rules)

    # -- pause (loop thread: call through the broker's `call`) -------------------------

    @property
    def paused(self) -> bool:
        return self._resumed is not None and not self._resumed.is_set()

    def pause(self) -> None:
        if not self.paused:
            self._resumed = asyncio.Event()

    def resume(self) -> None:
        if self._resumed is not None:
            self._resumed.set()
            self._resumed = None

    # -- FaultHook ------------------------------------------------------------------

    async def before_dispatch(self, ctx: RequestContext, request: Any) -> FaultDecision | None:
        while self._resumed is not None:
            await self._resumed.wait()
        with self._lock:
            rtt = self._rtt_s.get(ctx.broker_id, self._rtt_s.get(None, 0.0)) if self._rtt_s else 0
        if rtt:
            # Before the handler: its answer cannot leave before the round trip is over.
            await asyncio.sleep(rtt)
        with self._lock:
            hooks = [hook for hook in self._hooks if hook.matches(ctx, request)]
        for hook in hooks:
            decision = await self._consult(hook, ctx, request)
            if decision is not None:
                return decision
        for rule in self._take(ctx, request, latency=True):
            await asyncio.sleep(rule.delay_ms / 1000)
        taken = self._take(ctx, request, latency=False)
        if taken:
            return self._decide(taken[0], ctx, request)
        if self.fallback is not None:
            return await self.fallback.before_dispatch(ctx, request)
        return None

    async def _consult(
        self, hook: RequestHook, ctx: RequestContext, request: Any
    ) -> FaultDecision | None:
        """What `hook` makes of this request: a decision, or None to go on."""
        if not hook.take():
            return None
        try:
            answer = hook.fn(request)
            error = as_error_code(answer)
        except Exception as exc:  # the test's function: its bug costs one connection
            log.warning("request hook %s on %s raised %r", hook.id, hook.api, exc)
            hook.failed(exc)
            return FaultDecision(close_connection=True)
        with self._lock:
            self._hooks = [h for h in self._hooks if not h.spent]
        if answer is None:
            return None
        if answer is DROP:
            return FaultDecision(close_connection=True)
        if isinstance(answer, DELAY):
            await asyncio.sleep(answer.seconds)
            return None
        if answer is HOLD:
            with self._lock:
                if self._released is None:
                    self._released = asyncio.Event()
                    self._held_loop = asyncio.get_running_loop()
                released = self._released
            await released.wait()
            return None
        if error is not None:
            return FaultDecision(handler=_answer_with_error(error, hook.topic, None))
        if not _answers(answer, ctx):
            hook.failed(
                InvalidFault(
                    f"request hook {hook.id} returned {answer!r}: return None, an error code, "
                    f"DELAY(s), DROP, HOLD or a {hook.api}Response of version {ctx.api_version}"
                )
            )
            return FaultDecision(close_connection=True)
        return FaultDecision(handler=_answer_with(answer))

    def _take(self, ctx: RequestContext, request: Any, latency: bool) -> list[Rule]:
        """Matching rules (every latency rule, else the first other one), each hit once."""
        taken: list[Rule] = []
        with self._lock:
            for rule in self._rules:
                if (rule.kind == "latency") != latency or rule.api_key != ctx.api_key:
                    continue
                if rule.topic is not None and not touches(
                    request, rule.topic, rule.partition, ctx.state
                ):
                    continue
                rule.hits += 1
                taken.append(rule)
                if not latency:
                    break
            self._rules = [r for r in self._rules if not r.exhausted]
        return taken

    def _decide(self, rule: Rule, ctx: RequestContext, request: Any) -> FaultDecision:
        log.info("fault %s hits %s from %s", rule.describe(), ctx.api_key, ctx.client_id)
        if rule.kind == "drop_connection":
            return FaultDecision(close_connection=True)
        if rule.kind == "lose_ack":
            return FaultDecision(drop_response=True)
        return FaultDecision(handler=_answer_with_error(rule.error, rule.topic, rule.partition))


def _answers(answer: Any, ctx: RequestContext) -> bool:
    """Whether `answer` is a response the request's API and version can be sent."""
    kind = type(answer)
    return (
        getattr(kind, "__type__", None) is EntityType.response
        and getattr(kind, "__api_key__", None) == ctx.api_key
        and getattr(kind, "__version__", None) == ctx.api_version
    )


def _answer_with(response: Any) -> Any:
    """A handler answering with the response object a request hook returned."""

    async def handler(ctx: RequestContext, request: Any) -> Any:
        return response

    return handler


def _answer_with_error(error: Any, topic: str | None, partition: int | None) -> Any:
    """A handler answering the targeted part with `error`, the rest normally."""

    async def handler(ctx: RequestContext, request: Any) -> Any:
        if topic is None:
            return error_response(ctx, request, error)
        target, _ = cut(request, topic, partition, ctx.state, keep_matching=True)
        rest, anything_left = cut(request, topic, partition, ctx.state, False)
        injected = error_response(ctx, target, error)
        if not anything_left:
            return injected
        served = await load_handlers()[ctx.api_key].handler(ctx, rest)
        return injected if served is None else merge_responses(served, injected)

    return handler
