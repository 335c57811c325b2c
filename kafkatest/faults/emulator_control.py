"""The emulator's side of the fault API: its hook, clock and partition leaders.

Moving a leader is an election in the state (`EmulatorState.move_leader`), so
the partition's leader epoch moves on as Kafka's would.

All changes to emulator state run on the emulator's loop thread (`broker.call`),
the same thread that serves requests, so a fault never lands halfway through a
request.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.emulator import InvalidFault, StateError
from kafkatest.errors import BrokerError
from kafkatest.faults.compaction import check_compacted, targets


class EmulatorControl:
    def __init__(self, broker: EmulatorBroker) -> None:
        self.broker = broker
        self.hook = broker.emulator.hooks

    def pause(self) -> None:
        """Requests wait in the hook; connections stay open and new ones are accepted."""
        self.broker.call(self.hook.pause)

    def resume(self) -> None:
        self.broker.call(self.hook.resume)

    def run_retention(self, retention_ms: int, first: bool) -> None:
        """Age everything written so far past `retention_ms` on the broker clock, then apply."""
        if first:
            try:
                self.broker.advance_clock(retention_ms + 1)
            except ValueError as exc:  # the clock would pass its last instant
                raise InvalidFault(f"age_out_records: {exc}") from None
        self.broker.enforce_retention()

    def compact(
        self, topic: str, until: int | Mapping[int, int] | None, roll: bool, timeout_s: float
    ) -> dict[int, int]:
        """Roll with a marker and clean at once; nothing to wait for."""
        try:
            reached = self.broker.compact_now(topic, roll)
        except StateError as exc:
            raise BrokerError(f"cannot compact {topic!r}: {exc}") from exc
        ends = self.broker.latest_offsets(topic)
        check_compacted(topic, reached, targets({p: ends[p] - roll for p in reached}, until))
        return reached

    def move_leader(self, topic: str, partition: int, to_broker: int | None) -> tuple[int, int]:
        """Make `to_broker` (default: the next broker) lead; returns (old, new) leader."""
        broker_ids = self.broker.broker_ids  # checked by `faults.cluster` before this

        def move() -> tuple[int, int]:
            state = self.broker.state
            current = state.topics.get(topic).partition(partition).leader_id
            new = to_broker
            if new is None:  # the next broker (the first when it has no leader)
                after = broker_ids.index(current) if current in broker_ids else -1
                new = broker_ids[(after + 1) % len(broker_ids)]
            old, _epoch = state.move_leader(topic, partition, new)
            return old, new

        return self.broker.call(move)

    def set_leader(self, topic: str, partition: int, leader: int) -> None:
        """Put a leader back (when clearing a move: another election, another epoch);
        a deleted topic is left alone."""

        def put_back() -> None:
            found = self.broker.state.topics.find(topic)
            if found is not None and partition < len(found.partitions):
                self.broker.state.move_leader(topic, partition, leader)

        self.broker.call(put_back)
