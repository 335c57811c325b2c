"""What any client can do with any Kafka-compatible broker, over the wire.

These helpers go through confluent-kafka (librdkafka), so they behave the same on
every backend, and they wait for the cluster to agree (a created topic is visible,
a deleted one is gone) before returning: tests then never race the broker.

A `Broker` holds its clients (`TopicClient`, `RecordClient`, `AclClient`) and offers
their methods as its own; each client reaches the broker through `Reach` (where it is,
its shared admin client and producer). `ClientOperations` names what seeding, sinks and
oracles use of a broker.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar, cast, runtime_checkable

from confluent_kafka import (
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, OffsetSpec

from kafkatest.brokers.client_waits import DEFAULT_TIMEOUT_S, retry, wait_until
from kafkatest.brokers.topic_client import Reach, TopicClient
from kafkatest.errors import BrokerError
from kafkatest.records import Header, Record

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "READ_BACK_REQUESTS",
    "ClientOperations",
    "RecordClient",
    "wait_until",
]

T = TypeVar("T")
#: The (API key, version) pairs `consume` and `delete_topic` send with librdkafka 2.16
#: (ListOffsets, FindCoordinator, Fetch, DeleteTopics) and nothing before them in a
#: typical test: a test that reads a Spark job's output back sends them first after
#: the job (`Broker.expect_requests`). Another librdkafka's versions load at first use.
READ_BACK_REQUESTS = ((2, 7), (10, 2), (1, 16), (20, 4))
#: Errors a just-created, just-moved or just-restarted partition gives until its
#: leader is ready (a restarted Kafka briefly answers UNKNOWN_LEADER_EPOCH).
_SETTLING_ERRORS = {
    KafkaError.NOT_LEADER_FOR_PARTITION,
    KafkaError.LEADER_NOT_AVAILABLE,
    KafkaError.UNKNOWN_TOPIC_OR_PART,
    KafkaError.REQUEST_TIMED_OUT,
    KafkaError.UNKNOWN_LEADER_EPOCH,
    KafkaError.FENCED_LEADER_EPOCH,
}


class _NotSettled(Exception):
    """An answer that is not an error but is not yet an answer either."""


def _position(msg: Message) -> tuple[int, int]:
    """A consumed message's (partition, offset).

    librdkafka sets both on records and on partition-EOF events, the only messages
    `consume` uses them for; the stubs make them optional for other errors.
    """
    return cast(int, msg.partition()), cast(int, msg.offset())


def _headers(msg: Message) -> tuple[Header, ...]:
    """A consumed record's headers, a list of (str, bytes | None) pairs.

    The stubs' type also allows the dict that `Producer.produce` accepts.
    """
    return tuple(cast("list[Header]", msg.headers() or ()))


@runtime_checkable
class ClientOperations(Protocol):
    """What seeding, sink readers and oracles use of a broker (every `Broker` is one;
    a stand-in that is not is told apart with ``isinstance``)."""

    def admin(self) -> AdminClient: ...

    def spark_options(
        self, user: str | None = None, mechanism: str | None = None
    ) -> dict[str, str]: ...

    def create_topic(
        self,
        topic: str,
        partitions: int = 1,
        config: Mapping[str, object] | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        replication_factor: int | None = None,
    ) -> None: ...

    def topic_config(self, topic: str) -> dict[str, str]: ...

    def earliest_offsets(self, topic: str) -> dict[int, int]: ...

    def latest_offsets(self, topic: str) -> dict[int, int]: ...

    def produce(self, records: Iterable[Record], timeout_s: float = 60.0) -> list[Record]: ...

    def consume(
        self, topic: str, partitions: Sequence[int] | None = None, timeout_s: float = 30.0
    ) -> list[Record]: ...


class RecordClient:
    """Offsets, produce and consume, shared by every backend; a `Broker` holds one
    (``broker.record_client``) and offers its methods as its own."""

    def __init__(self, broker: Reach, topics: TopicClient) -> None:
        self._broker = broker
        self._topics = topics

    # -- offsets ------------------------------------------------------------------

    def _settled(self, attempt: Callable[[], T], what: str, timeout_s: float = 15.0) -> T:
        """Run an admin call, retried while a partition's leader settles.

        Real Kafka lists a new partition's leader in metadata a moment before that
        broker answers for it, and a restarted broker is briefly unsure of its leader
        epochs: a client retries such errors, so do we.
        """

        def once() -> T:
            try:
                return attempt()
            except KafkaException as exc:
                error = exc.args[0] if exc.args else None
                retriable = isinstance(error, KafkaError) and (
                    error.retriable() or error.code() in _SETTLING_ERRORS
                )
                if not retriable:
                    raise BrokerError(f"{what} failed: {error or exc}") from exc
                raise _NotSettled(str(error or exc)) from exc

        return retry(
            once, (_NotSettled,), timeout_s, 0.1, lambda exc: BrokerError(f"{what} failed: {exc}")
        )

    def _list_offsets(self, topic: str, spec: OffsetSpec) -> dict[int, int]:
        def attempt() -> dict[int, int]:
            count = self._topics.partition_count(topic)
            request = {TopicPartition(topic, p): spec for p in range(count)}
            futures = self._broker.admin().list_offsets(request)
            offsets = {
                tp.partition: future.result(timeout=30).offset for tp, future in futures.items()
            }
            # Just after a restart librdkafka 2.x can report success with offset -1001
            # (none) while its metadata catches up with the new leader epochs (seen
            # within ~1.5 s of the broker answering again); `consume` would then skip
            # that partition, so such an answer is asked again.
            unknown = sorted(p for p, offset in offsets.items() if offset < 0)
            if unknown:
                raise _NotSettled(f"partitions {unknown} answered no offset ({offsets})")
            return offsets

        return self._settled(attempt, f"listing offsets of {topic!r}")

    def earliest_offsets(self, topic: str) -> dict[int, int]:
        """Log start offset of every partition."""
        return self._list_offsets(topic, OffsetSpec.earliest())

    def latest_offsets(self, topic: str) -> dict[int, int]:
        """Log end offset (high watermark) of every partition."""
        return self._list_offsets(topic, OffsetSpec.latest())

    def delete_records(self, topic: str, before: Mapping[int, int]) -> dict[int, int]:
        """Delete records below `before[partition]`; returns the new log start offsets."""

        def attempt() -> dict[int, int]:
            request = [TopicPartition(topic, p, offset) for p, offset in before.items()]
            futures = self._broker.admin().delete_records(request)
            return {tp.partition: f.result(timeout=30).low_watermark for tp, f in futures.items()}

        return self._settled(attempt, f"deleting records of {topic!r}")

    # -- data -----------------------------------------------------------------------

    def produce(self, records: Iterable[Record], timeout_s: float = 60.0) -> list[Record]:
        """Write `records` and return them placed (partition, offset, timestamp).

        Order is kept per partition; the call fails if any write is not acknowledged.
        """
        producer = self._broker.producer()
        batch = list(records)
        placed: list[Record | None] = [None] * len(batch)
        errors: list[str] = []

        def on_delivery(index: int) -> Callable[[Any, Any], None]:
            def callback(err: KafkaError | None, msg: Any) -> None:
                if err is not None:
                    errors.append(f"{batch[index].topic}: {err.str()}")
                    return
                _kind, ts = msg.timestamp()
                placed[index] = batch[index].at(msg.partition(), msg.offset(), ts)

            return callback

        for index, record in enumerate(batch):
            kwargs: dict[str, Any] = {
                "value": record.value,
                "key": record.key,
                "on_delivery": on_delivery(index),
            }
            if record.headers:
                kwargs["headers"] = list(record.headers)
            if record.partition is not None:
                kwargs["partition"] = record.partition
            if record.timestamp_ms is not None:
                kwargs["timestamp"] = record.timestamp_ms
            while True:
                try:
                    producer.produce(record.topic, **kwargs)
                    break
                except BufferError:
                    producer.poll(0.05)
            if index % 1000 == 0:
                producer.poll(0)
        remaining = producer.flush(timeout_s)
        if remaining:
            raise BrokerError(f"{remaining} records were not acknowledged within {timeout_s:.0f}s")
        if errors:
            raise BrokerError(f"{len(errors)} records failed to produce; first: {errors[0]}")
        return [r for r in placed if r is not None]

    def consume(
        self,
        topic: str,
        partitions: Sequence[int] | None = None,
        timeout_s: float = 30.0,
    ) -> list[Record]:
        """Read every record of `topic` from log start to the current end.

        The end is fixed when the call starts, so a job still writing does not make
        this wait forever; records come back ordered by partition, then offset.
        """
        start = self.earliest_offsets(topic)
        end = self.latest_offsets(topic)
        wanted = sorted(partitions) if partitions is not None else sorted(end)
        pending = {p for p in wanted if end[p] > start[p]}
        if not pending:
            return []
        consumer = Consumer(
            {
                **self._broker.client_config(),
                "group.id": "kafkatest-reader",
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "auto.offset.reset": "earliest",
                "isolation.level": "read_committed",
            }
        )
        records: dict[int, list[Record]] = {p: [] for p in pending}
        next_offset = {p: start[p] for p in pending}
        try:
            consumer.assign([TopicPartition(topic, p, start[p]) for p in sorted(pending)])
            deadline = time.monotonic() + timeout_s
            while pending:
                if time.monotonic() > deadline:
                    got = {p: len(v) for p, v in records.items()}
                    raise BrokerError(
                        f"reading {topic!r} timed out after {timeout_s:.0f}s; "
                        f"partitions not finished: {sorted(pending)}, records so far: {got}"
                    )
                # librdkafka's consume() returns when it holds `num_messages` or at
                # its timeout: asking for more than is left would wait out the timeout
                # on every call, so ask for what is left (partition-EOF events count,
                # and a gap in the offsets, a transaction marker, costs one timeout).
                left = sum(end[p] - next_offset[p] for p in pending)
                for msg in consumer.consume(num_messages=max(1, min(left, 10000)), timeout=0.2):
                    err = msg.error()
                    partition, offset = _position(msg)
                    if err is not None:
                        if err.code() == KafkaError._PARTITION_EOF:
                            if offset >= end[partition]:
                                pending.discard(partition)
                            continue
                        raise BrokerError(f"reading {topic!r}: {err.str()}")
                    if partition not in pending or offset >= end[partition]:
                        pending.discard(partition)
                        continue
                    next_offset[partition] = offset + 1
                    _kind, ts = msg.timestamp()
                    records[partition].append(
                        Record(
                            topic=topic,
                            value=msg.value(),
                            key=msg.key(),
                            headers=_headers(msg),
                            partition=partition,
                            offset=offset,
                            timestamp_ms=ts,
                        )
                    )
                    if offset + 1 >= end[partition]:
                        pending.discard(partition)
        finally:
            consumer.close()
        return [r for p in sorted(records) for r in records[p]]
