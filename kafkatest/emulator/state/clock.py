"""The broker's notion of now, which tests can move forward.

Retention and LogAppendTime read this clock, so a test can age data out by
advancing it instead of sleeping.
"""

from __future__ import annotations

import time


class Clock:
    """Wall-clock milliseconds plus an offset a test controls."""

    def __init__(self) -> None:
        self._offset_ms = 0

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000 + self._offset_ms

    def advance(self, ms: int) -> None:
        """Move time forward by `ms` milliseconds (it keeps flowing after that)."""
        if ms < 0:
            raise ValueError("the clock only moves forward")
        self._offset_ms += ms
