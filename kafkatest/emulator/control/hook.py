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

from kafkatest.emulator.control.rules import Rule
from kafkatest.emulator.protocol.error_responses import error_response, merge_responses
from kafkatest.emulator.protocol.request_scope import cut, touches
from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.faults import FaultDecision, FaultHook
from kafkatest.emulator.server.handlers import load_handlers

log = logging.getLogger("kafkatest.faults")


class InjectedFaults:
    """A `FaultHook` driven by rules; requests no rule takes go to `fallback`."""

    def __init__(self, fallback: FaultHook | None = None) -> None:
        self.fallback = fallback
        self._rules: list[Rule] = []
        self._lock = threading.Lock()
        #: Set while paused; requests wait on it (created and set on the loop thread).
        self._resumed: asyncio.Event | None = None

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

    def clear_rules(self) -> None:
        with self._lock:
            self._rules = []

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
        for rule in self._take(ctx, request, latency=True):
            await asyncio.sleep(rule.delay_ms / 1000)
        taken = self._take(ctx, request, latency=False)
        if taken:
            return self._decide(taken[0], ctx, request)
        if self.fallback is not None:
            return await self.fallback.before_dispatch(ctx, request)
        return None

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
        return FaultDecision(handler=_answer_with_error(rule))


def _answer_with_error(rule: Rule) -> Any:
    """A handler answering the targeted part with the rule's error, the rest normally."""

    async def handler(ctx: RequestContext, request: Any) -> Any:
        if rule.topic is None:
            return error_response(ctx, request, rule.error)
        target, _ = cut(request, rule.topic, rule.partition, ctx.state, keep_matching=True)
        rest, anything_left = cut(request, rule.topic, rule.partition, ctx.state, False)
        injected = error_response(ctx, target, rule.error)
        if not anything_left:
            return injected
        served = await load_handlers()[ctx.api_key].handler(ctx, rest)
        return injected if served is None else merge_responses(served, injected)

    return handler
