"""What moving the broker clock sets off, at once and in a fixed order.

Kafka's periodic work (the retention check, the log cleaner, the abort of timed-out
transactions) and the group coordinators' timers (session expiry, rebalance and join
timeouts) wait for time to pass. When a test moves the emulator's clock they run in
the same call, on the broker's thread, before it returns: the test's next line sees
the deleted segments, the abort markers and the members gone, with no poll between.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kafkatest.emulator.state.broker_state import EmulatorState


def back_to_real_time(state: EmulatorState, frozen: bool = False) -> int:
    """Put `state`'s clock back on the wall clock (frozen there if `frozen`), moving every
    deadline the broker keeps (its periodic tasks' last runs, open transactions, group
    timers, the token sweep) back by as much: what was due a minute later on the moved
    clock is due a minute later on the wall clock, not hours. Returns the new now."""
    before = state.clock.now_ms()
    now = state.clock.reset(frozen)
    shift = now - before
    if shift:
        state.shift_periodic_tasks(shift)
        state.transactions.shift(shift)
        state.delegation_tokens.shift(shift)
        for clock in (state.groups.clock, state.consumer_groups.clock):
            move = getattr(clock, "shift", None)
            if move is not None:  # a real-time LoopClock keeps its own time
                move(shift)
    return now


def pass_time(state: EmulatorState, ms: int) -> int:
    """Advance `state`'s clock by `ms` and run what fell due; returns the new now."""
    state.clock.advance(ms)
    # Each task keeps its own interval (retention.check.interval.ms, the cleaner's
    # backoff, transaction.abort.timed.out.transaction.cleanup.interval.ms), as on Kafka.
    state.maybe_enforce_retention()
    for clock in (state.groups.clock, state.consumer_groups.clock):
        fire_due = getattr(clock, "fire_due", None)
        if fire_due is not None:  # a real-time LoopClock fires by itself
            fire_due()
    return state.clock.now_ms()
