"""The fault API: one `Faults` object per broker, the same calls on every backend.

A test says what should go wrong (a topic deleted under a running job, records
aged out, the broker paused, a produce acknowledgement lost) and the backend
that can do it does it; a backend that cannot raises `UnsupportedOperation`
saying what it would need, rather than a test passing without its fault.
Ongoing faults (pause, a stopped broker, rules, moved leaders, transactions left
open) are listed by `active()` and undone by `clear()`, which the `kafka_faults`
fixture calls after every test so one test's fault never leaks into the next.

`Faults` holds its parts, as a `Broker` holds its clients: topic faults (topics.py),
emulator-only ones (emulator_faults.py) and a stopped query's checkpoint damaged
(checkpoint_faults.py), each public method of a part offered as a method of `Faults`
(`kafkatest._ground.held`); this module holds the broker's own faults (stop, pause, a
cluster's brokers and leaders), open transactions, and the bookkeeping that lists and
clears them all.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from typing import Any

from kafkatest._ground.held import held
from kafkatest.brokers.base import Broker
from kafkatest.brokers.capabilities import Capability
from kafkatest.emulator import StateError, checks
from kafkatest.errors import BrokerError
from kafkatest.faults import cluster, transactions as open_transactions, validation as check
from kafkatest.faults.backends import BackendControl, KafkaProcessControl, UnpausableControl
from kafkatest.faults.checkpoint_faults import CheckpointFaults
from kafkatest.faults.emulator_faults import EmulatorFaults
from kafkatest.faults.registry import fault
from kafkatest.faults.topics import TopicFaults
from kafkatest.limits import MAX_CLOCK_STEP_MS

__all__ = ["MAX_CLOCK_STEP_MS", "Faults", "faults_for"]

#: Why a backend without `Capability.STOP` cannot be stopped.
NOT_RUN_HERE = "is not run by kafkatest, which therefore cannot stop or start it"
NOT_PAUSABLE = (
    "cannot be paused by kafkatest: it would need the broker process (or `docker pause` "
    "on its container); use the emulator or kafka backend"
)
NO_CLUSTER = "runs one broker kafkatest cannot split: use the emulator or kafka backend"

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
        if broker.can(Capability.STATE):
            from kafkatest.faults.emulator_control import EmulatorControl

            self._emulator = EmulatorControl(broker)  # type: ignore[arg-type]
            self._control = self._emulator
        elif broker.can(Capability.PAUSE):
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
        self.topic_faults = TopicFaults(broker, self._control, self._moved)
        self.emulator_faults = EmulatorFaults(broker, self._emulator)
        self.checkpoint_faults = CheckpointFaults(broker)

    # -- the parts' faults, as methods of `Faults` ------------------------------------------

    delete_topic = held("topic_faults", TopicFaults.delete_topic)
    recreate_topic = held("topic_faults", TopicFaults.recreate_topic)
    topic_id = held("topic_faults", TopicFaults.topic_id)
    delete_records = held("topic_faults", TopicFaults.delete_records)
    poison = held("topic_faults", TopicFaults.poison)
    age_out_records = held("topic_faults", TopicFaults.age_out_records)
    add_partitions = held("topic_faults", TopicFaults.add_partitions)
    compact_now = held("topic_faults", TopicFaults.compact_now)
    add_latency = held("emulator_faults", EmulatorFaults.add_latency)
    slow_fetch = held("emulator_faults", EmulatorFaults.slow_fetch)
    drop_connections = held("emulator_faults", EmulatorFaults.drop_connections)
    inject_error = held("emulator_faults", EmulatorFaults.inject_error)
    lose_produce_acks = held("emulator_faults", EmulatorFaults.lose_produce_acks)
    advance_clock = held("emulator_faults", EmulatorFaults.advance_clock)
    enforce_retention = held("emulator_faults", EmulatorFaults.enforce_retention)
    damage_checkpoint = held("checkpoint_faults", CheckpointFaults.damage_checkpoint)

    @property
    def backend(self) -> str:
        return self.broker.backend

    # -- the broker (emulator, kafka) ---------------------------------------------------

    @fault(needs=Capability.STOP, why=NOT_RUN_HERE, aliases=("broker_stop",))
    def stop(self) -> None:
        """Stop the broker; data is kept for `start`."""
        self.resume()
        self.broker.stop()
        self._stopped = True

    @fault(needs=Capability.STOP, why=NOT_RUN_HERE, aliases=("broker_start",))
    def start(self) -> None:
        self.broker.start()
        self._stopped = False

    @fault(needs=Capability.RESTART, why=NOT_RUN_HERE, aliases=("broker_restart",))
    def restart(self) -> None:
        """Stop and start with data kept: clients see an outage, then the same data."""
        self.stop()
        self.start()

    @fault(needs=Capability.PAUSE, why=NOT_PAUSABLE, aliases=("broker_pause",))
    def pause(self) -> None:
        """The broker stops answering; connections stay open (real Kafka: SIGSTOP)."""
        self._control.pause()
        self._paused = True

    @fault(aliases=("broker_resume",))
    def resume(self) -> None:
        """Answer again; requests sent while paused are served now, even a write whose
        producer already timed out (it lands, so a retry can duplicate it)."""
        if self._paused:
            self._control.resume()
            self._paused = False

    # -- transactions (every backend) ------------------------------------------------------

    @fault()
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

    @fault()
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
        count = checks.count(action, "records", records)
        checks.at_most(
            action, "records", count, open_transactions.MAX_RECORDS, "a few records show the stall"
        )
        timeout = checks.count(
            action,
            "transaction_timeout_ms",
            timeout_ms,
            open_transactions.MIN_TRANSACTION_TIMEOUT_MS,
        )
        checks.at_most(
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

    # -- a cluster's brokers and leaders (emulator, kafka) ------------------------------------------------------------------

    @fault(needs=Capability.CLUSTERS, why=NO_CLUSTER)
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

    @fault(needs=Capability.CLUSTERS, why=NO_CLUSTER)
    def stop_broker(self, broker_id: int) -> None:
        """Take one broker of a cluster down (a controlled shutdown: the partitions it
        led move to in-sync replicas; those with none have no leader until it returns)."""
        nodes = cluster.several_brokers(self.broker, "stopping one broker")
        cluster.check_broker_id(nodes, "stop_broker", broker_id)
        nodes.stop_node(broker_id)
        self._stopped_brokers.add(broker_id)

    @fault(needs=Capability.CLUSTERS, why=NO_CLUSTER)
    def start_broker(self, broker_id: int) -> None:
        """Bring a stopped broker back: it rejoins its partitions' in-sync replicas;
        leadership does not move back by itself (as on Kafka)."""
        nodes = cluster.several_brokers(self.broker, "starting one broker")
        cluster.check_broker_id(nodes, "start_broker", broker_id)
        nodes.start_node(broker_id)
        self._stopped_brokers.discard(broker_id)

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
