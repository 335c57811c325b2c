"""Time as the group coordinator sees it.

Session expiry, rebalance timeouts and the initial rebalance delay are all timers.
Routing them through a `Clock` lets the emulator run on real time while tests
drive a `ManualClock` and jump minutes ahead instantly instead of sleeping. These
schedule callbacks (`call_at`), which the broker's `state/clock.py` (a reading of now)
and the test-facing `kafkatest.clocks.MovableClock` do not.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

log = logging.getLogger("kafkatest.emulator")


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    """Milliseconds and timers; callbacks run on the event loop thread."""

    def now_ms(self) -> int: ...

    def call_at(self, deadline_ms: int, callback: Callable[[], None]) -> TimerHandle: ...


class LoopClock:
    """Real time, from the running asyncio loop (monotonic)."""

    def now_ms(self) -> int:
        return int(asyncio.get_running_loop().time() * 1000)

    def call_at(self, deadline_ms: int, callback: Callable[[], None]) -> TimerHandle:
        return asyncio.get_running_loop().call_at(deadline_ms / 1000, callback)


class PolledClock:
    """Timers against any `now_ms` source, such as a broker clock a test can advance.

    Such a clock jumps without telling anyone, so due timers are looked for every
    `poll_ms` of real time while any are pending (no polling when idle).
    """

    def __init__(self, now_ms: Callable[[], int], poll_ms: int = 50) -> None:
        self._now_ms = now_ms
        self._poll_s = poll_ms / 1000
        self._timers: list[_ManualTimer] = []
        self._sequence = itertools.count()
        self._tick_handle: asyncio.Handle | None = None
        self._tick_loop: asyncio.AbstractEventLoop | None = None
        #: When the scheduled tick runs (loop time): a new timer due sooner moves it.
        self._tick_at = 0.0

    def now_ms(self) -> int:
        return self._now_ms()

    def call_at(self, deadline_ms: int, callback: Callable[[], None]) -> TimerHandle:
        timer = _ManualTimer(deadline_ms, next(self._sequence), callback)
        heapq.heappush(self._timers, timer)
        loop = asyncio.get_running_loop()
        # A broker restarted on a new loop must not wait for a tick of the old one.
        if self._tick_handle is None or self._tick_loop is not loop:
            self._tick_loop = loop
            self._schedule_tick(loop, 0.0)
        else:
            # The tick already scheduled may be up to `poll_ms` away (sessions keep
            # timers pending): a short timer, such as a new group's join window,
            # would fire that much late.
            due_s = max(0.0, (deadline_ms - self._now_ms()) / 1000)
            if loop.time() + due_s < self._tick_at:
                self._tick_handle.cancel()
                self._schedule_tick(loop, due_s)
        return timer

    def _schedule_tick(self, loop: asyncio.AbstractEventLoop, wait_s: float) -> None:
        self._tick_at = loop.time() + wait_s
        self._tick_handle = loop.call_later(wait_s, self._tick)

    def _tick(self) -> None:
        self._tick_handle = None
        _fire_due(self._timers, self._now_ms())
        if self._timers:
            loop = asyncio.get_running_loop()
            wait_s = min(
                self._poll_s, max(0.0, (self._timers[0].deadline_ms - self._now_ms()) / 1000)
            )
            self._schedule_tick(loop, wait_s)

    def fire_due(self) -> None:
        """Fire the timers due now, without waiting for the next poll (a test has just
        moved the clock and expects what fell due to have happened)."""
        _fire_due(self._timers, self._now_ms())

    def shift(self, ms: int) -> None:
        """Move every pending deadline by `ms` (the clock was put back by as much): what
        was due in a minute is still due in a minute. The heap's order holds."""
        for timer in self._timers:
            timer.deadline_ms += ms

    def close(self) -> None:
        if self._tick_handle is not None:
            self._tick_handle.cancel()
            self._tick_handle = None
        self._timers.clear()


def _fire_due(timers: list[_ManualTimer], now_ms: int) -> None:
    """Fire the due timers in order. One that raises is logged and the rest still fire,
    and the clock keeps ticking: a bug in one group must not stop every other group's
    sessions in a user's test process (a ManualClock lets it raise, so tests see it)."""
    while timers and timers[0].deadline_ms <= now_ms:
        timer = heapq.heappop(timers)
        if timer.cancelled:
            continue
        try:
            timer.callback()
        except Exception:
            log.exception("a group coordinator timer failed; the other timers go on")


@dataclass(order=True)
class _ManualTimer:
    deadline_ms: int
    sequence: int
    callback: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """Time that only moves when a test calls `advance`, firing due timers in order."""

    def __init__(self, start_ms: int = 0) -> None:
        self._now_ms = start_ms
        self._timers: list[_ManualTimer] = []
        self._sequence = itertools.count()

    def now_ms(self) -> int:
        return self._now_ms

    def call_at(self, deadline_ms: int, callback: Callable[[], None]) -> TimerHandle:
        timer = _ManualTimer(deadline_ms, next(self._sequence), callback)
        heapq.heappush(self._timers, timer)
        return timer

    def advance(self, ms: int) -> None:
        """Move time forward; timers scheduled by fired callbacks fire too if due."""
        target = self._now_ms + ms
        while self._timers and self._timers[0].deadline_ms <= target:
            timer = heapq.heappop(self._timers)
            if timer.cancelled:
                continue
            self._now_ms = max(self._now_ms, timer.deadline_ms)
            timer.callback()
        self._now_ms = target

    def pending_timers(self) -> int:
        return sum(1 for timer in self._timers if not timer.cancelled)
