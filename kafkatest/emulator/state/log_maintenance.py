"""What the broker does to its logs on its own time: retention, the log cleaner, and
aborting transactions past their timeout.

Kafka runs each on a timer; the emulator runs them when requests arrive and their
interval has passed on the state's clock, so a test that moves the clock sees them
happen without waiting. `compact_now` lets a fault make the cleaner run at once.
"""

from __future__ import annotations

from kafkatest.emulator.protocol.batches import read_header
from kafkatest.emulator.protocol.record_rewrite import single_record_batch
from kafkatest.emulator.state import cleaner
from kafkatest.emulator.state.broker_settings import BrokerSettings
from kafkatest.emulator.state.errors import InvalidConfig
from kafkatest.emulator.state.partition_writes import PartitionWrites


class LogMaintenance:
    """The broker's periodic work on its logs; `EmulatorState` holds one
    (``state.maintenance``) and offers its methods as its own."""

    def __init__(self, settings: BrokerSettings, writes: PartitionWrites, started_ms: int) -> None:
        self.settings = settings
        self.writes = writes
        self.clock = writes.clock
        self.topics = writes.topics
        self.producers = writes.producers
        self.transactions = writes.transactions
        #: When each periodic task last ran, on the state's clock.
        self._last_retention_check_ms = started_ms
        self._last_txn_check_ms = started_ms
        self._last_cleaner_run_ms = started_ms

    def shift_periodic_tasks(self, ms: int) -> None:
        """Move when each task last ran by `ms` (the clock was put back by as much)."""
        self._last_retention_check_ms += ms
        self._last_txn_check_ms += ms
        self._last_cleaner_run_ms += ms

    def maybe_enforce_retention(self) -> None:
        """Apply retention, run the log cleaner and abort timed-out transactions when
        their intervals have passed on the state's clock (Produce, Fetch and ListOffsets
        call this)."""
        now = self.clock.now_ms()
        if now - self._last_retention_check_ms >= self.settings.retention_check_interval_ms:
            self.enforce_retention()
        if now - self._last_cleaner_run_ms >= self.settings.log_cleaner_backoff_ms:
            self.run_cleaner()
        self.maybe_abort_timed_out_transactions()

    def maybe_abort_timed_out_transactions(self) -> None:
        """Kafka's periodic abort of transactions past their timeout, on the state's clock."""
        now = self.clock.now_ms()
        if now - self._last_txn_check_ms >= self.settings.transaction_abort_interval_ms:
            self._last_txn_check_ms = now
            self.transactions.abort_timed_out()

    def enforce_retention(self) -> None:
        """Delete every segment that breaks its topic's retention.ms / retention.bytes now."""
        now = self.clock.now_ms()
        self._last_retention_check_ms = now
        for topic in self.topics:
            if "delete" not in topic.config("cleanup.policy"):
                continue
            retention_ms = topic.int_config("retention.ms")
            retention_bytes = topic.int_config("retention.bytes")
            for partition in topic.partitions:
                partition.log.apply_retention(now, retention_ms, retention_bytes)

    def run_cleaner(self, only: str | None = None, force: bool = False) -> None:
        """One cleaner pass over every compacted log that Kafka's cleaner would pick now
        (or, with `force`, every compacted log with something cleanable)."""
        now = self.clock.now_ms()
        self._last_cleaner_run_ms = now
        for topic in self.topics:
            if not topic.compacted or (only is not None and topic.name != only):
                continue
            config = topic.cleaner_config()
            for partition in topic.partitions:
                log = partition.log
                part = cleaner.cleanable(log, config, now, log.last_stable_offset)
                if part is None or part.cleanable_bytes == 0:
                    continue
                if force or part.due(config.min_cleanable_ratio):
                    producers = self.producers.last_records((topic.name, partition.index))
                    cleaner.clean(log, config, part, now, producers)

    def compact_now(self, name: str, roll: bool = True) -> dict[int, int]:
        """Roll every partition's active segment with a marker record (unless not
        `roll`) and clean what is cleanable, as `Faults.compact_now` makes real Kafka
        do; returns, per partition, the offset the cleaner reached (the marker's,
        unless something held it back)."""
        topic = self.topics.get(name)
        if not topic.compacted:
            raise InvalidConfig(
                f"topic {name} has cleanup.policy={topic.config('cleanup.policy')}: "
                "set cleanup.policy=compact (or compact,delete) to compact it"
            )
        now = self.clock.now_ms()
        marker = single_record_batch(cleaner.COMPACT_NOW_KEY, None, now)
        header = read_header(marker)
        for partition in topic.partitions if roll else ():
            partition.log.roll(now, topic.roll_limits)
            self.writes.append(topic, partition.index, header, marker)
        self.run_cleaner(only=name, force=True)
        reached = {}
        for partition in topic.partitions:
            checkpoint = partition.log.cleaner_checkpoint
            reached[partition.index] = (
                partition.log.log_start_offset if checkpoint is None else checkpoint
            )
        return reached
