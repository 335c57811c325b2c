"""A wall clock that races ahead, for tests that must not depend on how fast they run.

`EmulatorState`'s clock reads the wall clock (`state.clock._wall_ms`) unless frozen. A
test that reads `now`, then relies on the next reading being the same instant (a
segment roll between two timestamps a few ms apart, a check interval not yet passed)
fails on a machine busy with other work (issue 44, item 12). Under `racing_wall_clock`
every reading is `step_ms` later than the one before: a test that holds under it
does not depend on the machine's speed.
"""

from __future__ import annotations

import itertools

import pytest

from kafkatest.emulator.state import clock as clock_module


def racing_wall_clock(monkeypatch: pytest.MonkeyPatch, step_ms: int = 1_000) -> None:
    ticks = itertools.count()
    start = clock_module._wall_ms()
    monkeypatch.setattr(clock_module, "_wall_ms", lambda: start + step_ms * next(ticks))
