"""kafkatest's one clock abstraction for tests, `MovableClock`: the duration a test
moves a clock by, and one call that moves several together.

Its users, the clocks a test holds, both take ``advance(seconds=0, minutes=0,
hours=0, days=0)`` and answer ``now_ms()``:

- `kafka_broker.clock` (`kafkatest.brokers.broker_clock.BrokerClock`): the emulator's
  time; advancing it runs what fell due (retention, timeouts) before it returns.
- `spark_clock` (`kafkatest.spark.clock.QueryClock`): a streaming query's processing
  time (Spark's ManualClock, swapped into the query).

A test whose job and broker both measure time (a query's processing-time timeout over
records the broker stamped with LogAppendTime) moves them with one
`advance(broker_clock, query_clock, minutes=30)` so neither runs ahead of the other.

Two more clock modules are not this abstraction, because a test never holds them:
they are the emulator's own time, inside its sealed package. `emulator/state/clock.py`
is the broker's *now* (wall time plus an offset, frozen or running) that
`BrokerClock` moves; `emulator/state/groups/clock.py` schedules *timers* (``call_at``
on the event loop) for the group coordinator's sessions and rebalances, on real time
or against the broker's now.
"""

from __future__ import annotations

import math
from typing import Protocol


class MovableClock(Protocol):
    """A clock a test moves: the broker's (`kafka_broker.clock`) or a query's."""

    def advance(
        self, seconds: float = 0, minutes: float = 0, hours: float = 0, days: float = 0
    ) -> int: ...

    def now_ms(self) -> int: ...


def duration_ms(seconds: float = 0, minutes: float = 0, hours: float = 0, days: float = 0) -> int:
    """The whole milliseconds in a duration given in any mix of units.

    Refuses negative, infinite and NaN parts: a clock only moves forward, and a NaN
    would silently become zero.
    """
    parts = {"seconds": seconds, "minutes": minutes, "hours": hours, "days": days}
    for name, value in parts.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{name} must be a number, not {value!r}")
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be a finite number >= 0 (a clock only moves forward)")
    return round((seconds + 60 * minutes + 3600 * hours + 86400 * days) * 1000)


def advance(
    *clocks: MovableClock,
    seconds: float = 0,
    minutes: float = 0,
    hours: float = 0,
    days: float = 0,
) -> None:
    """Move every clock given by the same duration, in the order given.

    Put the broker's clock first: what falls due there (a retention delete, an
    expired transaction) has then happened before the query's next trigger fires.
    """
    if not clocks:
        raise TypeError("advance() needs at least one clock (kafka_broker.clock, spark_clock)")
    duration_ms(seconds, minutes, hours, days)  # refuse a bad duration before moving any
    for clock in clocks:
        clock.advance(seconds=seconds, minutes=minutes, hours=hours, days=days)
