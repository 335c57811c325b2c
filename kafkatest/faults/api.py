"""The fault API: one `Faults` object per broker, the same calls on every backend.

A test says what should go wrong (a topic deleted under a running job, records
aged out, the broker paused, a produce acknowledgement lost) and the backend
that can do it does it; a backend that cannot raises `UnsupportedOperation`
saying what it would need, rather than a test passing without its fault.
Ongoing faults (pause, a stopped broker, rules, moved leaders, transactions left
open) are listed by `active()` and undone by `clear()`, which the `kafka_faults`
fixture calls after every test so one test's fault never leaks into the next.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Mapping
from typing import Any

from kafkatest.brokers.base import Broker
from kafkatest.brokers.client import DEFAULT_TIMEOUT_S
from kafkatest.emulator.state.errors import StateError
from kafkatest.errors import BrokerError, UnsupportedOperation
from kafkatest.faults import cluster, topics
from kafkatest.faults import transactions as open_transactions
from kafkatest.faults import validation as check
from kafkatest.faults.backends import BackendControl, KafkaProcessControl, UnpausableControl
from kafkatest.faults.rules import Rule

#: Timestamps are milliseconds in an int64; a century is plenty for any test.
MAX_CLOCK_STEP_MS = 100 * 365 * 24 * 3600 * 1000
_by_broker: weakref.WeakKeyDictionary[Broker, Faults] = weakref.WeakKeyDictionary()
_by_broker_lock = threading.Lock()


def faults_for(broker: Broker) -> Faults:
    """The broker's `Faults` (one per broker, so every caller sees the same faults)."""
    with _by_broker_lock:
        faults = _by_broker.get(broker)
        if faults is None:
            faults = _by_broker[broker] = Faults(broker)
        return faults


class Faults:
    """Inject faults into `broker`; see the module docstring for the contract."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self._emulator: Any = None
        self._control: BackendControl
        if broker.backend == "emulator":
            from kafkatest.faults.emulator_control import EmulatorControl

            self._emulator = EmulatorControl(broker)  # type: ignore[arg-type]
            self._control = self._emulator
        elif broker.backend == "kafka":
            self._control = KafkaProcessControl(broker)
        else:
            self._control = UnpausableControl(broker)
        self._paused = False
        self._stopped = False
        #: Transactions a fault left open, ended (aborted) by `clear`.
        self._open_transactions: list[open_transactions.OpenTransaction] = []
        #: (topic, partition) -> the leader before the first move.
        self._moved: dict[tuple[str, int], tuple[int, int]] = {}
        #: Brokers of a cluster that `stop_broker` took down, started again by `clear`.
        self._stopped_brokers: set[int] = set()
        #: Poison pills written so far: their ids continue ``poison-<n>-...``.
        self._poisoned = 0

    @property
    def backend(self) -> str:
        return self.broker.backend

    # -- topics (every backend) ------------------------------------------------------

    def delete_topic(self, topic: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        """Delete `topic`; returns when metadata no longer lists it."""
        check.existing_topic(self.broker, "delete_topic", topic)
        self.broker.delete_topic(topic, timeout_s)
        self._forget_moves(topic)

    def recreate_topic(
        self,
        topic: str,
        partitions: int | None = None,
        config: Mapping[str, object] | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> str:
        """Delete and create `topic` again (same partition count unless given); the new id."""
        if partitions is not None:
            check.partition_total("recreate_topic", "partitions", partitions)
        check.existing_topic(self.broker, "recreate_topic", topic)
        new_id = topics.recreate_topic(self.broker, topic, partitions, config, timeout_s)
        self._forget_moves(topic)
        self._renew_helper_clients()
        return new_id

    def _forget_moves(self, topic: str) -> None:
        """A deleted topic's leader moves died with it; clear() must not touch its successor."""
        for key in [k for k in self._moved if k[0] == topic]:
            del self._moved[key]

    def topic_id(self, topic: str) -> str:
        """The topic's current id (it changes when the topic is recreated)."""
        check.existing_topic(self.broker, "topic_id", topic)
        return topics.topic_id(self.broker, topic)

    def delete_records(self, topic: str, before: int | Mapping[int, int]) -> dict[int, int]:
        """Delete records below `before` (all partitions, or per partition; -1 = all)."""
        offsets = [before] if isinstance(before, int) else list(before.values())
        for offset in offsets:
            check.count("delete_records", "before (-1: up to the high watermark)", offset, -1)
        if isinstance(before, Mapping):
            if not before:
                raise check.InvalidFault("delete_records: before names no partition")
            check.existing_partitions(self.broker, "delete_records", topic, before)
        else:
            check.existing_topic(self.broker, "delete_records", topic)
        return topics.delete_records(self.broker, topic, before)

    def poison(
        self,
        topic: str,
        partition: int | None = None,
        payload: str | bytes = "wrong-magic",
        count: int = 1,
        schema_id: int = 1,
    ) -> list[dict[str, int]]:
        """Write `count` records that do not decode as Confluent-framed data.

        `payload` is a kind from `kafkatest.faults.poison.KINDS` (``wrong-magic``,
        ``unknown-schema-id``, ``truncated``, ``garbage-body`` with `schema_id`) or
        the exact bytes. Each carries a ``kafkatest.id`` header ``poison-<n>`` and a
        ``kafkatest.poison`` header naming its kind; returns where they landed.
        """
        from kafkatest.faults import poison as pills

        check.existing_topic(self.broker, "poison", topic)
        if partition is not None:
            check.existing_partitions(self.broker, "poison", topic, [partition])
        try:
            sent = pills.poison_records(
                topic, partition, payload, count, schema_id, f"poison-{self._poisoned}-"
            )
        except ValueError as exc:
            raise check.InvalidFault(f"poison: {exc}") from None
        self._poisoned += count
        placed = self.broker.produce(sent)
        pills.check_placed(sent, placed)
        return [{"partition": r.partition or 0, "offset": r.offset or 0} for r in placed]

    def age_out_records(
        self, topic: str, retention_ms: int = 1, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> dict[int, int]:
        """Retention deletes everything written so far; the topic's retention is restored after."""
        check.count("age_out_records", "retention_ms", retention_ms)
        check.existing_topic(self.broker, "age_out_records", topic)
        first = [True]

        def run() -> None:
            self._control.run_retention(retention_ms, first[0])
            first[0] = False

        return topics.age_out_records(self.broker, topic, run, retention_ms, timeout_s)

    def add_partitions(self, topic: str, total: int, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        """Grow `topic` to `total` partitions; returns once all have leaders."""
        check.partition_total("add_partitions", "total", total)
        current = check.existing_topic(self.broker, "add_partitions", topic)
        if total <= current:
            raise check.InvalidFault(
                f"add_partitions: topic {topic!r} already has {current} partition(s); total "
                f"{total} would not be an increase (Kafka never removes partitions)"
            )
        self.broker.add_partitions(topic, total, timeout_s)
        self._renew_helper_clients()

    def _renew_helper_clients(self) -> None:
        """kafkatest's cached producer knows the old partition layout for minutes
        (librdkafka refreshes metadata every 5 min); seeding must see the new one."""
        self.broker.close_clients()

    def compact_now(
        self,
        topic: str,
        until: int | Mapping[int, int] | None = None,
        roll: bool = True,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> dict[int, int]:
        """Compact what has been written to `topic` so far, as Kafka's cleaner would.

        Each partition gets one marker record (a tombstone keyed `COMPACT_NOW_KEY`)
        that rolls its active segment, which the cleaner never touches; then the
        cleaner runs over everything below it (the emulator at once, real Kafka with
        `segment.ms=1` and `min.cleanable.dirty.ratio=0` set until it is done). The
        topic's min.compaction.lag.ms and delete.retention.ms still apply. Returns
        where the cleaner got to per partition; raises BrokerError if that is short
        of `until` (default: the marker).

        With `roll=False` no marker is written: the cleaner runs over the segments
        already closed (by segment.ms / segment.bytes), and `until` (required) says
        how far that is.
        """
        if not roll and until is None:
            raise check.InvalidFault(
                "compact_now(roll=False) needs until=: the offset where the active segment "
                "starts, which the cleaner stops at"
            )
        if isinstance(until, Mapping):
            for offset in until.values():
                check.non_negative("compact_now", "until", offset)
            check.existing_partitions(self.broker, "compact_now", topic, until)
        else:
            if until is not None:
                check.non_negative("compact_now", "until", until)
            check.existing_topic(self.broker, "compact_now", topic)
        return self._control.compact(topic, until, roll, timeout_s)

    # -- the broker (emulator, kafka) ---------------------------------------------------

    def stop(self) -> None:
        """Stop the broker; data is kept for `start`."""
        self.resume()
        self.broker.stop()
        self._stopped = True

    def start(self) -> None:
        self.broker.start()
        self._stopped = False

    def restart(self) -> None:
        """Stop and start with data kept: clients see an outage, then the same data."""
        self.stop()
        self.start()

    def pause(self) -> None:
        """The broker stops answering; connections stay open (real Kafka: SIGSTOP)."""
        self._control.pause()
        self._paused = True

    def resume(self) -> None:
        if self._paused:
            self._control.resume()
            self._paused = False

    # -- transactions (every backend) ------------------------------------------------------

    def hung_transaction(
        self,
        topic: str,
        partition: int = 0,
        records: int = 1,
        transaction_timeout_ms: int = open_transactions.MAX_TRANSACTION_TIMEOUT_MS,
    ) -> str:
        """A producer writes `records` records in a transaction and then hangs: the
        partition's last stable offset stays at the first of them, so read_committed
        readers stall there until the transaction times out or `clear` aborts it.
        Returns the transactional id."""
        return self._open_transaction(
            "hung_transaction", topic, partition, records, transaction_timeout_ms, crash=False
        )

    def crash_producer_mid_transaction(
        self,
        topic: str,
        partition: int = 0,
        records: int = 1,
        transaction_timeout_ms: int = open_transactions.MAX_TRANSACTION_TIMEOUT_MS,
    ) -> str:
        """As `hung_transaction`, but the producer is killed (SIGKILL) once its records
        are written: nothing ever ends the transaction but its timeout, a new producer
        with the same transactional id, or `clear`. Returns the transactional id."""
        return self._open_transaction(
            "crash_producer_mid_transaction",
            topic,
            partition,
            records,
            transaction_timeout_ms,
            crash=True,
        )

    def _open_transaction(
        self,
        action: str,
        topic: str,
        partition: int,
        records: int,
        timeout_ms: int,
        crash: bool,
    ) -> str:
        count = check.count(action, "records", records)
        check.at_most(
            action, "records", count, open_transactions.MAX_RECORDS, "a few records show the stall"
        )
        timeout = check.count(
            action,
            "transaction_timeout_ms",
            timeout_ms,
            open_transactions.MIN_TRANSACTION_TIMEOUT_MS,
        )
        check.at_most(
            action,
            "transaction_timeout_ms",
            timeout,
            open_transactions.MAX_TRANSACTION_TIMEOUT_MS,
            "Kafka refuses longer transactions (transaction.max.timeout.ms)",
        )
        check.target(self.broker, action, topic, partition)
        opened = open_transactions.open_transaction(
            self.broker, topic, partition, count, timeout, crash
        )
        self._open_transactions.append(opened)
        return opened.transactional_id

    # -- emulator only ------------------------------------------------------------------

    def _require_emulator(self, what: str) -> Any:
        if self._emulator is None:
            raise UnsupportedOperation(
                f"{what} needs the emulator backend: the {self.backend!r} backend is a real "
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
        from kafkatest.emulator.server.handlers import load_handlers

        control = self._require_emulator(action)
        key = check.api(action, api, served=load_handlers())
        check.rule_scope(action, key, topic, partition)
        count = check.times(action, times)
        check.target(self.broker, action, topic, partition)
        rule = Rule(kind, key, count, topic, partition, **details)
        return int(control.hook.add(rule).id)

    def add_latency(
        self,
        api: int | str,
        delay_ms: int,
        times: int | None = None,
        topic: str | None = None,
        partition: int | None = None,
    ) -> int:
        """Delay requests of `api` by `delay_ms` (all, or the next `times`); the fault id."""
        delay = check.latency_ms("add_latency", delay_ms)
        return self._add("add_latency", "latency", api, times, topic, partition, delay_ms=delay)

    def drop_connections(
        self, api: int | str, times: int = 1, topic: str | None = None, partition: int | None = None
    ) -> int:
        """Close the connection instead of answering the next `times` requests of `api`."""
        return self._add("drop_connections", "drop_connection", api, times, topic, partition)

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
        code = check.error("inject_error", error)
        return self._add("inject_error", "error", api, times, topic, partition, error=code)

    def lose_produce_acks(
        self, times: int = 1, topic: str | None = None, partition: int | None = None
    ) -> int:
        """The next `times` produce requests are written but never answered (connection closed)."""
        return self._add("lose_produce_acks", "lose_ack", 0, times, topic, partition)

    def move_leader(self, topic: str, partition: int = 0, to_broker: int | None = None) -> int:
        """Make another broker lead the partition; the new leader's id.

        Clients talking to the old leader get NOT_LEADER_OR_FOLLOWER and must
        refresh metadata. Needs a cluster: the emulator or kafka with brokers=2 or more
        (on Kafka: a reassignment putting the broker first, then a preferred election).
        """
        cluster.several_brokers(self.broker, "moving a partition leader")
        check.target(self.broker, "move_leader", topic, partition)
        if to_broker is not None:
            cluster.check_broker_id(self.broker, "move_leader", to_broker)  # type: ignore[arg-type]
        if self._emulator is None:
            old, new = cluster.move_leader_on_kafka(self.broker, topic, partition, to_broker)
        else:
            try:
                old, new = self._emulator.move_leader(topic, partition, to_broker)
            except StateError as exc:
                raise BrokerError(f"cannot move the leader of {topic}[{partition}]: {exc}") from exc
        original = self._moved.get((topic, partition), (old, new))[0]
        self._moved[(topic, partition)] = (original, new)
        return int(new)

    def stop_broker(self, broker_id: int) -> None:
        """Take one broker of a cluster down (a controlled shutdown: the partitions it
        led move to in-sync replicas; those with none have no leader until it returns)."""
        nodes = cluster.several_brokers(self.broker, "stopping one broker")
        cluster.check_broker_id(nodes, "stop_broker", broker_id)
        nodes.stop_node(broker_id)
        self._stopped_brokers.add(broker_id)

    def start_broker(self, broker_id: int) -> None:
        """Bring a stopped broker back: it rejoins its partitions' in-sync replicas;
        leadership does not move back by itself (as on Kafka)."""
        nodes = cluster.several_brokers(self.broker, "starting one broker")
        cluster.check_broker_id(nodes, "start_broker", broker_id)
        nodes.start_node(broker_id)
        self._stopped_brokers.discard(broker_id)

    def advance_clock(self, ms: int) -> None:
        """Move the emulator's clock forward (retention, LogAppendTime, session expiry)."""
        control = self._require_emulator("moving the broker clock")
        step = check.non_negative("advance_clock", "ms", ms)
        if step > MAX_CLOCK_STEP_MS:
            raise check.InvalidFault(
                f"advance_clock: {step} ms is more than {MAX_CLOCK_STEP_MS} ms (100 years)"
            )
        control.broker.advance_clock(step)

    def enforce_retention(self) -> None:
        """Apply every topic's retention now, as the broker's periodic check would."""
        self._require_emulator("enforcing retention now").broker.enforce_retention()

    # -- listing and clearing -------------------------------------------------------------

    def active(self) -> list[dict[str, Any]]:
        """Ongoing faults, JSON-ready: pause, stopped, rules, moved leaders."""
        out: list[dict[str, Any]] = []
        if self._paused:
            out.append({"kind": "pause"})
        if self._stopped:
            out.append({"kind": "stopped"})
        out.extend({"kind": "broker_stopped", "broker": b} for b in sorted(self._stopped_brokers))
        if self._emulator is not None:
            out.extend(rule.describe() for rule in self._emulator.hook.rules())
        out.extend(transaction.describe() for transaction in self._open_transactions)
        for (topic, partition), (original, now) in sorted(self._moved.items()):
            out.append(
                {
                    "kind": "leader_move",
                    "topic": topic,
                    "partition": partition,
                    "from": original,
                    "to": now,
                }
            )
        return out

    def remove(self, fault_id: int) -> bool:
        """Remove one rule by the id its call returned; whether it was still there."""
        return self._emulator is not None and bool(self._emulator.hook.remove(fault_id))

    def clear(self) -> None:
        """Undo every ongoing fault: resume, start, drop rules, put leaders back,
        abort transactions left open."""
        self.resume()
        if self._stopped:
            self.start()
        for broker_id in sorted(self._stopped_brokers):
            self.start_broker(broker_id)
        opened, self._open_transactions = self._open_transactions, []
        for transaction in opened:
            open_transactions.end(self.broker, transaction)
        if self._emulator is not None:
            self._emulator.hook.clear_rules()
            for (topic, partition), (original, _now) in self._moved.items():
                self._emulator.set_leader(topic, partition, original)
        else:
            for (topic, partition), (original, _now) in self._moved.items():
                with contextlib.suppress(BrokerError):  # a topic deleted since
                    cluster.move_leader_on_kafka(self.broker, topic, partition, original)
        self._moved.clear()
