"""What any client can do with any Kafka-compatible broker, over the wire.

These helpers go through confluent-kafka (librdkafka), so they behave the same on
every backend, and they wait for the cluster to agree (a created topic is visible,
a deleted one is gone) before returning: tests then never race the broker.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from confluent_kafka import (
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
)

from kafkatest.errors import BrokerError, UnsupportedOperation
from kafkatest.records import Header, Record

if TYPE_CHECKING:
    from kafkatest.brokers.security import BrokerSecurity

T = TypeVar("T")
DEFAULT_TIMEOUT_S = 30.0
_LIBRDKAFKA_LOG = logging.getLogger("kafkatest.librdkafka")
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


def wait_until(
    condition: Callable[[], bool], timeout_s: float, what: str, interval_s: float = 0.05
) -> None:
    """Poll `condition` until true; raise BrokerError naming `what` on time-out."""
    deadline = time.monotonic() + timeout_s
    while True:
        if condition():
            return
        if time.monotonic() > deadline:
            raise BrokerError(f"timed out after {timeout_s:.0f}s waiting until {what}")
        time.sleep(interval_s)


def _result(future: Any, what: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> Any:
    try:
        return future.result(timeout=timeout_s)
    except KafkaException as exc:
        raise BrokerError(f"{what} failed: {exc.args[0] if exc.args else exc}") from exc


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


class ClientOperations(ABC):
    """Topic, offset, produce and consume helpers shared by every backend."""

    _admin_client: AdminClient | None = None
    _producer: Producer | None = None
    _client_lock = threading.Lock()
    #: Set by a backend started with security; None is a PLAINTEXT listener.
    security_runtime: BrokerSecurity | None = None

    @property
    @abstractmethod
    def bootstrap_servers(self) -> str:
        """``host:port[,host:port]`` for clients, Spark's ``kafka.bootstrap.servers``."""

    # -- clients -----------------------------------------------------------------

    def client_config(
        self, user: str | None = None, mechanism: str | None = None
    ) -> dict[str, Any]:
        """confluent-kafka (librdkafka) settings to reach this broker as `user`.

        Without a user: the harness's own settings (its admin user on a secured
        broker), which the helpers, seeding, sink readers and faults use. On a
        secured broker the dict carries ``security.protocol``, the SASL login
        (`mechanism` defaults to the broker's first) and the CA file to trust.
        """
        # librdkafka's own log lines go to Python logging, so pytest shows them only
        # for a failing test instead of spraying stderr during broker restarts.
        config: dict[str, Any] = {"bootstrap.servers": self.bootstrap_servers}
        if user is None:
            config["client.id"] = "kafkatest"
        config["logger"] = _LIBRDKAFKA_LOG
        if self.security_runtime is not None:
            config.update(self.security_runtime.librdkafka(user, mechanism))
        return config

    def spark_options(
        self, user: str | None = None, mechanism: str | None = None
    ) -> dict[str, str]:
        """The ``kafka.``-prefixed source and sink options that reach this broker as `user`.

        Pass them to ``.options(**...)`` of a Kafka source or sink exactly as a
        production job carries them (``kafka.security.protocol``,
        ``kafka.sasl.jaas.config``, ``kafka.ssl.truststore.location``, ...).
        """
        options = {"kafka.bootstrap.servers": self.bootstrap_servers}
        if self.security_runtime is not None:
            java = self.security_runtime.kafka_clients(user, mechanism)
            options.update({f"kafka.{key}": value for key, value in java.items()})
        return options

    def java_client_properties(
        self, path: Path, user: str | None = None, mechanism: str | None = None
    ) -> Path:
        """Write a kafka-clients properties file (a tool's ``--command-config``) for `user`."""
        text = f"bootstrap.servers={self.bootstrap_servers}\n"
        if self.security_runtime is not None:
            from kafkatest.security import properties_text

            text += properties_text(self.security_runtime.kafka_clients(user, mechanism))
        path.write_text(text)
        path.chmod(0o600)
        return path

    def add_user(self, name: str, password: str, mechanism: str | None = None) -> None:
        """Let `name` log in with `password` (every enabled mechanism unless one is named)."""
        raise UnsupportedOperation(f"{type(self).__name__} cannot add users")

    def _sasl_runtime(self) -> BrokerSecurity:
        runtime = self.security_runtime
        if runtime is None or not runtime.security.sasl:
            protocol = runtime.security.protocol if runtime is not None else "PLAINTEXT"
            raise BrokerError(
                f"users log in over SASL and this broker's listener is {protocol}: start it with "
                'security_protocol="SASL_PLAINTEXT" or "SASL_SSL"'
            )
        return runtime

    def admin(self) -> AdminClient:
        with self._client_lock:
            if self._admin_client is None:
                self._admin_client = AdminClient(self.client_config())
            return self._admin_client

    def producer(self) -> Producer:
        """One idempotent producer per broker, partitioning keys like Java does."""
        with self._client_lock:
            if self._producer is None:
                self._producer = Producer(
                    {
                        **self.client_config(),
                        "enable.idempotence": True,
                        "partitioner": "murmur2_random",
                        "linger.ms": 5,
                        "message.timeout.ms": 60000,
                    }
                )
            return self._producer

    def warm_up_producer(self) -> None:
        """Create the harness's producer now, so that its producer-id handshake
        (retried by librdkafka on a 500 ms timer when, as at creation, no
        connection is up yet) is done before the first `produce` needs it."""
        self.producer().poll(0)

    def close_clients(self) -> None:
        """Drop cached clients (before a broker goes away for good)."""
        with self._client_lock:
            if self._producer is not None:
                self._producer.flush(5)
            self._producer = None
            self._admin_client = None

    # -- topics --------------------------------------------------------------------

    def list_topics(self, timeout_s: float = 10.0) -> list[str]:
        metadata = self.admin().list_topics(timeout=timeout_s)
        return sorted(name for name in metadata.topics if not name.startswith("__"))

    def partition_count(self, topic: str, timeout_s: float = 10.0) -> int:
        metadata = self.admin().list_topics(topic=topic, timeout=timeout_s)
        info = metadata.topics.get(topic)
        if info is None or info.error is not None:
            raise BrokerError(f"topic {topic!r} does not exist")
        return len(info.partitions)

    def topic_exists(self, topic: str) -> bool:
        metadata = self.admin().list_topics(timeout=10)
        info = metadata.topics.get(topic)
        return info is not None and info.error is None and len(info.partitions) > 0

    def create_topic(
        self,
        topic: str,
        partitions: int = 1,
        config: Mapping[str, object] | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        replication_factor: int | None = None,
    ) -> None:
        """Create `topic` and wait until every partition has a leader.

        `replication_factor` (default: the broker's ``default.replication.factor``)
        above 1 needs a cluster (brokers=N); with it,
        ``config={"min.insync.replicas": 2}`` makes acks=all writes need 2 in sync."""
        from kafkatest.brokers.base import parse_topic_config

        new = NewTopic(
            topic,
            num_partitions=partitions,
            replication_factor=-1 if replication_factor is None else replication_factor,
            config=parse_topic_config(config),
        )
        futures = self.admin().create_topics([new], operation_timeout=timeout_s)
        _result(futures[topic], f"creating topic {topic!r}", timeout_s)
        wait_until(
            lambda: self._leaders_ready(topic, partitions),
            timeout_s,
            f"topic {topic!r} has {partitions} partitions with leaders",
        )

    def _leaders_ready(self, topic: str, partitions: int) -> bool:
        info = self.admin().list_topics(topic=topic, timeout=5).topics.get(topic)
        if info is None or info.error is not None or len(info.partitions) != partitions:
            return False
        return all(p.leader >= 0 for p in info.partitions.values())

    def delete_topic(self, topic: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        """Delete `topic` and wait until metadata no longer lists it."""
        futures = self.admin().delete_topics([topic], operation_timeout=timeout_s)
        _result(futures[topic], f"deleting topic {topic!r}", timeout_s)
        wait_until(lambda: not self.topic_exists(topic), timeout_s, f"topic {topic!r} is gone")

    def add_partitions(self, topic: str, total: int, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        """Grow `topic` to `total` partitions (Kafka never shrinks a topic)."""
        futures = self.admin().create_partitions([NewPartitions(topic, total)])
        _result(futures[topic], f"adding partitions to {topic!r}", timeout_s)
        wait_until(
            lambda: self._leaders_ready(topic, total),
            timeout_s,
            f"topic {topic!r} has {total} partitions",
        )

    def alter_topic_config(self, topic: str, config: Mapping[str, object]) -> None:
        """Set topic configs (retention.ms, ...) incrementally."""
        from kafkatest.brokers.base import parse_topic_config

        entries = [
            ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
            for name, value in parse_topic_config(config).items()
        ]
        resource = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=entries)
        futures = self.admin().incremental_alter_configs([resource])
        for future in futures.values():
            _result(future, f"altering config of {topic!r}")

    def topic_config_overrides(self, topic: str) -> dict[str, str]:
        """Only the configs set on the topic itself (not defaults nor broker settings)."""
        resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
        futures = self.admin().describe_configs([resource])
        entries = _result(futures[resource], f"describing config of {topic!r}")
        dynamic = ConfigSource.DYNAMIC_TOPIC_CONFIG.value
        return {
            name: e.value
            for name, e in entries.items()
            if getattr(e.source, "value", e.source) == dynamic
        }

    def reset_topic_config(self, topic: str, names: Iterable[str]) -> None:
        """Remove configs from the topic, so their defaults apply again."""
        entries = [
            ConfigEntry(name, None, incremental_operation=AlterConfigOpType.DELETE)
            for name in names
        ]
        if not entries:
            return
        resource = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=entries)
        for future in self.admin().incremental_alter_configs([resource]).values():
            _result(future, f"resetting config of {topic!r}")

    def topic_config(self, topic: str) -> dict[str, str]:
        resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
        futures = self.admin().describe_configs([resource])
        entries = _result(futures[resource], f"describing config of {topic!r}")
        return {name: entry.value for name, entry in entries.items()}

    # -- offsets ------------------------------------------------------------------

    def _settled(self, attempt: Callable[[], T], what: str, timeout_s: float = 15.0) -> T:
        """Run an admin call, retried while a partition's leader settles.

        Real Kafka lists a new partition's leader in metadata a moment before that
        broker answers for it, and a restarted broker is briefly unsure of its leader
        epochs: a client retries such errors, so do we.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return attempt()
            except KafkaException as exc:
                error = exc.args[0] if exc.args else None
                retriable = isinstance(error, KafkaError) and (
                    error.retriable() or error.code() in _SETTLING_ERRORS
                )
                if not retriable or time.monotonic() > deadline:
                    raise BrokerError(f"{what} failed: {error or exc}") from exc
                time.sleep(0.1)

    def _list_offsets(self, topic: str, spec: OffsetSpec) -> dict[int, int]:
        def attempt() -> dict[int, int]:
            count = self.partition_count(topic)
            request = {TopicPartition(topic, p): spec for p in range(count)}
            futures = self.admin().list_offsets(request)
            return {
                tp.partition: future.result(timeout=30).offset for tp, future in futures.items()
            }

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
            futures = self.admin().delete_records(request)
            return {tp.partition: f.result(timeout=30).low_watermark for tp, f in futures.items()}

        return self._settled(attempt, f"deleting records of {topic!r}")

    # -- data -----------------------------------------------------------------------

    def produce(self, records: Iterable[Record], timeout_s: float = 60.0) -> list[Record]:
        """Write `records` and return them placed (partition, offset, timestamp).

        Order is kept per partition; the call fails if any write is not acknowledged.
        """
        producer = self.producer()
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
                **self.client_config(),
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
