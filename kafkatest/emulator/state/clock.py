"""The broker's notion of now, which tests can stop and move forward.

Retention, segment rolls, LogAppendTime, transaction and producer-id timeouts, group
sessions, the cleaner's lag and ListOffsets by timestamp read this clock, so a test
ages data or times a member out by advancing it instead of sleeping. Frozen, it
moves only when advanced: two records appended a second apart carry one timestamp.
Not a `kafkatest.clocks.MovableClock`: it moves by whole milliseconds on the broker's
thread; a test holds it through `kafka_broker.clock`, which is one.
"""

from __future__ import annotations

import time

from kafkatest.limits import MAX_CLOCK_MS, MAX_CLOCK_STEP_MS


class Clock:
    """Wall-clock milliseconds (or a frozen instant) plus an offset a test controls."""

    def __init__(self) -> None:
        self._offset_ms = 0
        #: The wall time at which `freeze` stopped the clock, None while it runs.
        self._frozen_wall_ms: int | None = None

    def now_ms(self) -> int:
        wall = self._frozen_wall_ms if self._frozen_wall_ms is not None else _wall_ms()
        return wall + self._offset_ms

    @property
    def frozen(self) -> bool:
        return self._frozen_wall_ms is not None

    def freeze(self) -> int:
        """Stop the clock at now (it moves only by `advance` from here); returns now."""
        if self._frozen_wall_ms is None:
            self._frozen_wall_ms = _wall_ms()
        return self.now_ms()

    def resume(self) -> int:
        """Let a frozen clock run again from where it stands; returns now."""
        if self._frozen_wall_ms is not None:
            self._offset_ms = self.now_ms() - _wall_ms()
            self._frozen_wall_ms = None
        return self.now_ms()

    @property
    def moved(self) -> bool:
        """Whether the clock is off the wall clock: frozen, or advanced."""
        return self._frozen_wall_ms is not None or self._offset_ms != 0

    def reset(self, frozen: bool = False) -> int:
        """Back on the wall clock (frozen at it if `frozen`): what a test did is undone,
        so the next test on a shared broker starts on real time. Returns now."""
        self._offset_ms = 0
        self._frozen_wall_ms = _wall_ms() if frozen else None
        return self.now_ms()

    def advance(self, ms: int) -> None:
        """Move time forward by `ms` milliseconds (a running clock keeps flowing after).

        At most `MAX_CLOCK_STEP_MS` at once, and never past `MAX_CLOCK_MS`: a clock
        moved by 10^30 ms made every later timestamp unwritable (produce failed,
        transactions too) until the broker was restarted."""
        if isinstance(ms, bool) or not isinstance(ms, int):
            raise ValueError(f"the clock moves by whole milliseconds, not {ms!r}")
        if ms < 0:
            raise ValueError("the clock only moves forward")
        if ms > MAX_CLOCK_STEP_MS:
            raise ValueError(
                f"cannot move the clock by {ms} ms: at most {MAX_CLOCK_STEP_MS} ms "
                "(100 years) at once; check the units"
            )
        now = self.now_ms()
        if now + ms > MAX_CLOCK_MS:
            raise ValueError(
                f"cannot move the clock by {ms} ms: it would pass {MAX_CLOCK_MS} "
                f"(the end of year 9999) from {now}"
            )
        self._offset_ms += ms


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000
