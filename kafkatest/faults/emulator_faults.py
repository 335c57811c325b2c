"""Faults only the emulator can inject: rules on its requests, and its clock.

Delaying, failing or dropping one API's requests needs a hook inside the broker
(real Kafka would need a fault-injecting proxy), and so does moving time; on any
other backend these raise `UnsupportedOperation` saying so, rather than letting a
test pass without its fault. Each rule is checked against the broker before it
is installed, so one that could never fire is refused at once.
"""

from __future__ import annotations

from typing import Any

from kafkatest.brokers.base import Broker
from kafkatest.brokers.capabilities import Capability
from kafkatest.emulator import Rule, checks
from kafkatest.errors import UnsupportedOperation
from kafkatest.faults import validation as check
from kafkatest.faults.registry import NEEDS_A_PROXY, fault

#: Timestamps are milliseconds in an int64; a century is plenty for any test.

#: Why a real broker's clock and retention checks are not kafkatest's to move.
OWN_CLOCK = "runs on the machine's clock and its own retention checks"


class EmulatorFaults:
    """The emulator-only faults `Faults` (api.py) holds and offers as its own methods."""

    def __init__(self, broker: Broker, emulator: Any) -> None:
        self.broker = broker
        #: The emulator's `EmulatorControl`; None on every other backend.
        self._emulator = emulator

    def _require_emulator(self, what: str) -> Any:
        if self._emulator is None:
            raise UnsupportedOperation(
                f"{what} needs the emulator backend: the {self.broker.backend!r} backend is a real "
                "broker, which would need a fault-injecting proxy in front of it"
            )
        return self._emulator

    def _add(
        self,
        action: str,
        kind: str,
        api: object,
        times: object,
        topic: str | None,
        partition: int | None,
        **details: Any,
    ) -> int:
        """Check that the rule can fire on this broker, then install it; its id."""
        control = self._require_emulator(action)
        key = checks.served_api(action, api)
        checks.rule_scope(action, key, topic, partition)
        count = checks.times(action, times)
        check.target(self.broker, action, topic, partition)
        rule = Rule(kind, key, count, topic, partition, **details)
        return int(control.hook.add(rule).id)

    @fault(needs=Capability.REQUEST_HOOKS, why=NEEDS_A_PROXY)
    def add_latency(
        self,
        api: int | str,
        delay_ms: int,
        times: int | None = None,
        topic: str | None = None,
        partition: int | None = None,
    ) -> int:
        """Delay requests of `api` by `delay_ms` (all, or the next `times`); the fault id."""
        delay = checks.latency_ms("add_latency", delay_ms)
        return self._add("add_latency", "latency", api, times, topic, partition, delay_ms=delay)

    @fault(needs=Capability.REQUEST_HOOKS, why=NEEDS_A_PROXY)
    def slow_fetch(
        self,
        delay_ms: int,
        times: int | None = None,
        topic: str | None = None,
        partition: int | None = None,
    ) -> int:
        """Answer Fetch requests `delay_ms` late (all, or the next `times`): a slow
        broker as consumers see it, while producers are served at once; the fault id."""
        delay = checks.latency_ms("slow_fetch", delay_ms)
        return self._add("slow_fetch", "latency", "Fetch", times, topic, partition, delay_ms=delay)

    @fault(needs=Capability.REQUEST_HOOKS, why=NEEDS_A_PROXY)
    def drop_connections(
        self, api: int | str, times: int = 1, topic: str | None = None, partition: int | None = None
    ) -> int:
        """Close the connection instead of answering the next `times` requests of `api`."""
        return self._add("drop_connections", "drop_connection", api, times, topic, partition)

    @fault(needs=Capability.REQUEST_HOOKS, why=NEEDS_A_PROXY)
    def inject_error(
        self,
        api: int | str,
        error: int | str,
        times: int = 1,
        topic: str | None = None,
        partition: int | None = None,
    ) -> int:
        """Answer the next `times` requests of `api` (touching `topic`/`partition`) with `error`.

        Only the targeted topic or partition gets the error (and is not served);
        the rest of the same request is served normally.
        """
        code = checks.error("inject_error", error)
        return self._add("inject_error", "error", api, times, topic, partition, error=code)

    @fault(needs=Capability.REQUEST_HOOKS, why=NEEDS_A_PROXY)
    def lose_produce_acks(
        self, times: int = 1, topic: str | None = None, partition: int | None = None
    ) -> int:
        """The next `times` produce requests are written but never answered (connection closed)."""
        return self._add("lose_produce_acks", "lose_ack", 0, times, topic, partition)

    @fault(needs=Capability.CLOCK, why=OWN_CLOCK)
    def advance_clock(self, ms: int) -> None:
        """Move the emulator's clock forward (retention, LogAppendTime, session expiry)."""
        control = self._require_emulator("moving the broker clock")
        step = checks.non_negative("advance_clock", "ms", ms)  # at most: registry.MAXIMA
        try:
            control.broker.advance_clock(step)
        except ValueError as exc:  # it would pass the clock's last instant
            raise check.InvalidFault(f"advance_clock: {exc}") from None

    @fault(needs=Capability.CLOCK, why=OWN_CLOCK)
    def enforce_retention(self) -> None:
        """Apply every topic's retention now, as the broker's periodic check would."""
        self._require_emulator("enforcing retention now").broker.enforce_retention()
