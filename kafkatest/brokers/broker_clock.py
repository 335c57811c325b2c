"""`kafka_broker.clock`: the emulator's time, which a test stops and moves.

Retention, LogAppendTime, segment rolls, transaction timeouts, group sessions and
rebalances, the cleaner's lag and ListOffsets by timestamp all read it; `advance`
runs what fell due before it returns (`emulator/state/time_passes.py`). A real Kafka
runs on its machine's clock, so on other backends asking for the clock is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from kafkatest.clocks import duration_ms
from kafkatest.errors import UnsupportedOperation
from kafkatest.limits import MAX_CLOCK_STEP_MS

if TYPE_CHECKING:
    from kafkatest.brokers.capabilities import Capability


class _Backend(Protocol):
    """What `clock_of` asks of a broker (`base.Broker`, which imports this module)."""

    backend: str

    def can(self, capability: Capability) -> bool: ...


REFUSAL = (
    "the {backend!r} backend runs on its machine's clock, which kafkatest cannot stop "
    "or move: give the broker the time instead (a short retention.ms, "
    "transaction.timeout.ms or session.timeout.ms and a wait), or run the test on the "
    "emulator only with @pytest.mark.kafka_backends('emulator')"
)


class BrokerClock:
    """The emulator's clock, as a test holds it: `freeze`, `advance`, `now_ms` (a
    `kafkatest.clocks.MovableClock`, as `spark_clock` is)."""

    def __init__(self, broker: Any) -> None:
        #: An EmulatorBroker (duck-typed: `call` runs on its thread, `state` is its state,
        #: `emulator` moves its time).
        self._broker = broker

    def now_ms(self) -> int:
        """The broker's time, in epoch milliseconds."""
        return int(self._broker.call(self._broker.state.clock.now_ms))

    def freeze(self) -> int:
        """Stop the clock: from now on it moves only by `advance`. Returns `now_ms()`."""
        return int(self._broker.call(self._broker.state.clock.freeze))

    def resume(self) -> int:
        """Let a frozen clock run with the wall clock again, from where it stands."""
        return int(self._broker.call(self._broker.state.clock.resume))

    @property
    def frozen(self) -> bool:
        """Whether the clock stands still (moved only by `advance`)."""
        return bool(self._broker.call(lambda: self._broker.state.clock.frozen))

    @property
    def moved(self) -> bool:
        """Whether the broker's time is off the wall clock (frozen or advanced)."""
        return bool(self._broker.call(lambda: self._broker.state.clock.moved))

    def reset(self, frozen: bool = False) -> int:
        """Put the broker back on real time (frozen there if `frozen`), undoing what was
        frozen and advanced. The pytest plugin does this after each test, so a test
        that moves a shared broker's clock cannot age the next test's records."""
        return int(self._broker.emulator.back_to_real_time(frozen))

    def advance(
        self, seconds: float = 0, minutes: float = 0, hours: float = 0, days: float = 0
    ) -> int:
        """Move the broker's time forward and run what fell due (retention deletes,
        timed-out transactions aborted with their markers, expired members removed)
        before returning. Returns `now_ms()`."""
        step = duration_ms(seconds, minutes, hours, days)
        if step > MAX_CLOCK_STEP_MS:
            raise ValueError(
                f"advance: {step} ms is more than {MAX_CLOCK_STEP_MS} ms (100 years); "
                "check the units"
            )
        return int(self._broker.emulator.pass_time(step))


def broker_now_ms(broker: object) -> int:
    """The time a broker stamps and ages records by: its clock where a test can move it
    (the emulator), else this machine's."""
    import time

    from kafkatest.brokers.capabilities import Capability

    can = getattr(broker, "can", None)
    if can is not None and can(Capability.CLOCK):
        return BrokerClock(broker).now_ms()
    return time.time_ns() // 1_000_000


def clock_of(broker: _Backend) -> BrokerClock:
    """`broker`'s clock, or UnsupportedOperation naming what to do on its backend."""
    from kafkatest.brokers.capabilities import Capability

    if not broker.can(Capability.CLOCK):
        raise UnsupportedOperation(REFUSAL.format(backend=broker.backend))
    return BrokerClock(broker)
