"""Faults on topics and their records, which every backend can suffer.

Deleting or recreating a topic under a running job, records deleted, aged out,
compacted or poisoned, partitions added: each goes over the wire (or through the
backend's control where Kafka offers no request for it), so one test of a job's
resilience runs the same on the emulator and on real Kafka. Each checks its
target first, so a typo fails the fault, not the job under test.

They go through the same client operations a test uses, and each waits until the
broker agrees (the topic is gone, the new one is usable, the log start moved)
before returning: the job under test then meets the fault, never a half-applied
one. The wire work is in the functions at the end of this module.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping

from confluent_kafka import KafkaException, TopicCollection

from kafkatest.brokers.base import Broker
from kafkatest.brokers.capabilities import Capability
from kafkatest.brokers.client import DEFAULT_TIMEOUT_S, wait_until
from kafkatest.emulator import checks
from kafkatest.errors import BrokerError
from kafkatest.faults import validation as check
from kafkatest.faults.backends import BackendControl
from kafkatest.faults.registry import fault

#: compact_now reads when the cleaner ran: the emulator's own, or a Kafka kafkatest runs.
NO_CLEANER_VIEW = (
    "does not show kafkatest when the broker's cleaner has run (it reads that from the "
    "log directory of a broker it runs): use the emulator or kafka backend"
)


class TopicFaults:
    """The topic faults `Faults` (api.py) holds and offers as its own methods."""

    def __init__(
        self,
        broker: Broker,
        control: BackendControl,
        moved: dict[tuple[str, int], tuple[int, int]],
    ) -> None:
        self.broker = broker
        self._control = control
        #: `Faults`' leader moves, (topic, partition) -> (original, now): a deleted
        #: topic's are forgotten here.
        self._moved = moved
        #: Poison pills written so far: their ids continue ``poison-<n>-...``.
        self._poisoned = 0

    @fault()
    def delete_topic(self, topic: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        """Delete `topic`; returns when metadata no longer lists it."""
        check.existing_topic(self.broker, "delete_topic", topic)
        self.broker.delete_topic(topic, timeout_s)
        self._forget_moves(topic)

    @fault()
    def recreate_topic(
        self,
        topic: str,
        partitions: int | None = None,
        config: Mapping[str, object] | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> str:
        """Delete and create `topic` again (same partition count unless given); the new id."""
        if partitions is not None:
            checks.partition_total("recreate_topic", "partitions", partitions)
        check.existing_topic(self.broker, "recreate_topic", topic)
        new_id = _recreate(self.broker, topic, partitions, config, timeout_s)
        self._forget_moves(topic)
        self._renew_helper_clients()
        return new_id

    def _forget_moves(self, topic: str) -> None:
        """A deleted topic's leader moves died with it; clear() must not touch its successor."""
        for key in [k for k in self._moved if k[0] == topic]:
            del self._moved[key]

    @fault(scenario=False)
    def topic_id(self, topic: str) -> str:
        """The topic's current id (it changes when the topic is recreated)."""
        check.existing_topic(self.broker, "topic_id", topic)
        return _topic_id(self.broker, topic)

    @fault()
    def delete_records(self, topic: str, before: int | Mapping[int, int]) -> dict[int, int]:
        """Delete records below `before` (all partitions, or per partition; -1 = all)."""
        offsets = [before] if isinstance(before, int) else list(before.values())
        for offset in offsets:
            checks.count("delete_records", "before (-1: up to the high watermark)", offset, -1)
        if isinstance(before, Mapping):
            if not before:
                raise check.InvalidFault("delete_records: before names no partition")
            check.existing_partitions(self.broker, "delete_records", topic, before)
        else:
            partitions = check.existing_topic(self.broker, "delete_records", topic)
            before = dict.fromkeys(range(partitions), before)
        return self.broker.delete_records(topic, before)

    @fault()
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

    @fault()
    def age_out_records(
        self, topic: str, retention_ms: int = 1, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> dict[int, int]:
        """Retention deletes everything written so far; the topic's retention is restored after."""
        checks.count("age_out_records", "retention_ms", retention_ms)  # at most: MAXIMA
        check.existing_topic(self.broker, "age_out_records", topic)
        first = [True]

        def run() -> None:
            self._control.run_retention(retention_ms, first[0])
            first[0] = False

        return _age_out(self.broker, topic, run, retention_ms, timeout_s)

    @fault()
    def add_partitions(self, topic: str, total: int, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        """Grow `topic` to `total` partitions; returns once all have leaders."""
        checks.partition_total("add_partitions", "total", total)
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

    @fault(needs=Capability.LOG_DIRECTORY, why=NO_CLEANER_VIEW)
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
                checks.non_negative("compact_now", "until", offset)
            check.existing_partitions(self.broker, "compact_now", topic, until)
        else:
            if until is not None:
                checks.non_negative("compact_now", "until", until)
            check.existing_topic(self.broker, "compact_now", topic)
        return self._control.compact(topic, until, roll, timeout_s)


# -- over the wire, on every backend --------------------------------------------------
def _topic_id(broker: Broker, topic: str, timeout_s: float = 10.0) -> str:
    """The topic's id as Kafka prints it (base64); a recreated topic gets a new one."""
    futures = broker.admin().describe_topics(TopicCollection([topic]), request_timeout=timeout_s)
    try:
        description = futures[topic].result(timeout=timeout_s)
    except KafkaException as exc:
        raise BrokerError(f"describing topic {topic!r} failed: {exc.args[0]}") from exc
    return str(description.topic_id)


def _recreate(
    broker: Broker,
    topic: str,
    partitions: int | None = None,
    config: Mapping[str, object] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> str:
    """Delete `topic` and create it again; returns the new topic id.

    Kafka finishes a deletion asynchronously, so creation is retried while the
    broker still says the topic exists; the call returns once every partition has
    a leader and answers ListOffsets under the new id.
    """
    old_id = _topic_id(broker, topic)
    count = partitions if partitions is not None else broker.partition_count(topic)
    broker.delete_topic(topic, timeout_s)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            broker.create_topic(topic, partitions=count, config=config, timeout_s=timeout_s)
            break
        except BrokerError as exc:
            if "exist" not in str(exc).lower() or time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    new_id = ""

    def usable() -> bool:
        nonlocal new_id
        with contextlib.suppress(BrokerError, KafkaException):
            new_id = _topic_id(broker, topic)
            return new_id != old_id and len(broker.latest_offsets(topic)) == count
        return False

    wait_until(usable, timeout_s, f"recreated topic {topic!r} is usable under a new id")
    return new_id


def _age_out(
    broker: Broker,
    topic: str,
    wait_for_retention: Callable[[], None],
    retention_ms: int = 1,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> dict[int, int]:
    """Let time-based retention delete what is older than `retention_ms`.

    Sets retention.ms on the topic, lets the backend's retention run
    (`wait_for_retention`) until every partition's log start reached the end it
    had when called, then puts the topic's previous retention back, so records
    written afterwards stay. Returns the new log start offsets.
    """
    end = broker.latest_offsets(topic)
    previous = broker.topic_config(topic).get("retention.ms")
    broker.alter_topic_config(topic, {"retention.ms": retention_ms})
    try:

        def aged_out() -> bool:
            wait_for_retention()
            start = broker.earliest_offsets(topic)
            return all(start[p] >= end[p] for p in end)

        wait_until(aged_out, timeout_s, f"retention deleted the records of {topic!r}", 0.2)
    finally:
        if previous is not None:
            broker.alter_topic_config(topic, {"retention.ms": previous})
    return broker.earliest_offsets(topic)
