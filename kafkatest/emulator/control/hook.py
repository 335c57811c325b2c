"""The emulator's fault hook: the one place where injected faults meet requests.

The emulator server asks `before_dispatch` about every request; this hook holds
one list of request hooks (kfake's control primitive): the test's own `on_request`
functions and the fault rules a test added (latency, dropped connections, error
answers, lost acknowledgements), each rule wrapped in a hook whose function answers
as the rule says, so one loop decides every request. It also holds the pause gate
and the round-trip time. Hooks are added and removed from the test thread while the
loop runs on the emulator's, so they sit behind a lock never held across an await.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any

from kio.static.constants import EntityType

from kafkatest.emulator.control.errors import InvalidFault
from kafkatest.emulator.control.request_hooks import (
    DECIDES,
    DELAY,
    DELAYS,
    DROP,
    HOLD,
    LOSE_ACK,
    RequestHook,
    as_error_code,
)
from kafkatest.emulator.control.rules import Rule
from kafkatest.emulator.protocol.error_responses import error_response, merge_responses
from kafkatest.emulator.protocol.request_scope import cut
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
        #: The test's `on_request` hooks and the fault rules' hooks, in the order added
        #: (consulted by `phase`: the test's, then latencies, then the other rules).
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
        hook = rule_hook(rule)
        with self._lock:
            self._hooks.append(hook)
        return rule

    def remove(self, rule_id: int) -> bool:
        with self._lock:
            before = len(self._hooks)
            self._hooks = [h for h in self._hooks if h.rule is None or h.rule.id != rule_id]
            return len(self._hooks) < before

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
            others_hold = any(h.rule is None for h in self._hooks)
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
            return [h.rule for h in self._hooks if h.rule is not None]

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
            hooks = sorted(self._hooks, key=lambda hook: hook.phase)  # stable: order kept
        for hook in hooks:
            # Matched when its turn comes: an earlier hook's delay may have spent it.
            if not hook.matches(ctx, request):
                continue
            decision = await self._consult(hook, ctx, request)
            if decision is not None:
                return decision
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
        if answer is LOSE_ACK:
            return FaultDecision(drop_response=True)
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
            return FaultDecision(handler=_answer_with_error(error, hook.topic, hook.partition))
        if not _answers(answer, ctx):
            hook.failed(
                InvalidFault(
                    f"request hook {hook.id} returned {answer!r}: return None, an error code, "
                    f"DELAY(s), DROP, HOLD or a {hook.api}Response of version {ctx.api_version}"
                )
            )
            return FaultDecision(close_connection=True)
        return FaultDecision(handler=_answer_with(answer))


def rule_hook(rule: Rule) -> RequestHook:
    """`rule` as a request hook: its function answers as the rule's kind says (a
    latency delays and lets the request on; the others decide), and its `times` is the
    hook's, so the rule's `hits` count the requests it took."""
    fn: Callable[[Any], Any]
    if rule.kind == "latency":
        delay = DELAY(rule.delay_ms / 1000)
        fn, phase = (lambda request: delay), DELAYS
    else:
        answer: Any = {"drop_connection": DROP, "lose_ack": LOSE_ACK}.get(rule.kind, rule.error)

        def decide(request: Any) -> Any:
            log.info("fault %s hits %s", rule.describe(), rule.api_key)
            return answer

        fn, phase = decide, DECIDES
    return RequestHook(
        rule.api_key,
        fn,
        topic=rule.topic,
        partition=rule.partition,
        times=rule.times,
        phase=phase,
        rule=rule,
    )


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
