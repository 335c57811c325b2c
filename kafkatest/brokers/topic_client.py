"""What any client can do with a broker's topics: create, delete, grow, configure.

Each change waits until metadata agrees before returning (a created topic has its
leaders, a deleted one is gone), because tests that race the broker here fail
later somewhere unrelated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
)

from kafkatest.brokers.client_waits import DEFAULT_TIMEOUT_S, admin_result, wait_until
from kafkatest.errors import BrokerError

#: librdkafka's own errors for a request it dropped without an answer (safe to repeat
#: for an idempotent call).
_DROPPED_BY_THE_CLIENT = frozenset({KafkaError._DESTROY_BROKER, KafkaError._TRANSPORT})


class Reach(Protocol):
    """What a client needs of its broker: where it is, how to log in, and the admin
    client and producer the broker keeps (so that one `close_clients` drops them all)."""

    @property
    def bootstrap_servers(self) -> str: ...

    def client_config(
        self, user: str | None = None, mechanism: str | None = None
    ) -> dict[str, Any]: ...

    def admin(self) -> AdminClient: ...

    def producer(self) -> Producer: ...


class TopicClient:
    """Topic and topic-config helpers shared by every backend; a `Broker` holds one
    (``broker.topic_client``) and offers its methods as its own."""

    def __init__(self, broker: Reach) -> None:
        self._broker = broker

    def list_topics(self, timeout_s: float = 10.0) -> list[str]:
        metadata = self._broker.admin().list_topics(timeout=timeout_s)
        return sorted(name for name in metadata.topics if not name.startswith("__"))

    def partition_count(self, topic: str, timeout_s: float = 10.0) -> int:
        metadata = self._broker.admin().list_topics(topic=topic, timeout=timeout_s)
        info = metadata.topics.get(topic)
        if info is None or info.error is not None:
            raise BrokerError(f"topic {topic!r} does not exist")
        return len(info.partitions)

    def topic_exists(self, topic: str) -> bool:
        metadata = self._broker.admin().list_topics(timeout=10)
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
        new = NewTopic(
            topic,
            num_partitions=partitions,
            replication_factor=-1 if replication_factor is None else replication_factor,
            config=parse_topic_config(config),
        )
        futures = self._broker.admin().create_topics([new], operation_timeout=timeout_s)
        admin_result(futures[topic], f"creating topic {topic!r}", timeout_s)
        wait_until(
            lambda: self._leaders_ready(topic, partitions),
            timeout_s,
            f"topic {topic!r} has {partitions} partitions with leaders",
        )

    def _leaders_ready(self, topic: str, partitions: int) -> bool:
        info = self._broker.admin().list_topics(topic=topic, timeout=5).topics.get(topic)
        if info is None or info.error is not None or len(info.partitions) != partitions:
            return False
        return all(p.leader >= 0 for p in info.partitions.values())

    def delete_topic(self, topic: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        """Delete `topic` and wait until metadata no longer lists it.

        Asked again once when the admin client dropped the request itself (its broker
        handle went away while a restarted broker came back): deleting is idempotent,
        and a topic the first attempt deleted is then simply not found.
        """
        for attempt in (1, 2):
            futures = self._broker.admin().delete_topics([topic], operation_timeout=timeout_s)
            try:
                futures[topic].result(timeout=timeout_s)
                break
            except KafkaException as exc:
                code = exc.args[0].code() if exc.args and hasattr(exc.args[0], "code") else None
                if attempt == 1 and code in _DROPPED_BY_THE_CLIENT:
                    continue
                if attempt == 2 and code == KafkaError.UNKNOWN_TOPIC_OR_PART:
                    break
                admin_result(futures[topic], f"deleting topic {topic!r}", timeout_s)
        wait_until(lambda: not self.topic_exists(topic), timeout_s, f"topic {topic!r} is gone")

    def add_partitions(self, topic: str, total: int, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        """Grow `topic` to `total` partitions (Kafka never shrinks a topic)."""
        futures = self._broker.admin().create_partitions([NewPartitions(topic, total)])
        admin_result(futures[topic], f"adding partitions to {topic!r}", timeout_s)
        wait_until(
            lambda: self._leaders_ready(topic, total),
            timeout_s,
            f"topic {topic!r} has {total} partitions",
        )

    def alter_topic_config(self, topic: str, config: Mapping[str, object]) -> None:
        """Set topic configs (retention.ms, ...) incrementally; returns once a describe
        shows them (real Kafka's controller commits a change before its broker serves it)."""
        wanted = parse_topic_config(config)
        before = self.topic_config(topic)
        entries = [
            ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
            for name, value in wanted.items()
        ]
        resource = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=entries)
        futures = self._broker.admin().incremental_alter_configs([resource])
        for future in futures.values():
            admin_result(future, f"altering config of {topic!r}")

        def applied() -> bool:  # the value sent, or (if the broker spells it otherwise) a new one
            now = self.topic_config(topic)
            return all(
                now.get(k) in (v, None) or now.get(k) != before.get(k) for k, v in wanted.items()
            )

        wait_until(applied, DEFAULT_TIMEOUT_S, f"the broker shows the new config of {topic!r}")

    def topic_config_overrides(self, topic: str) -> dict[str, str]:
        """Only the configs set on the topic itself (not defaults nor broker settings)."""
        resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
        futures = self._broker.admin().describe_configs([resource])
        entries = admin_result(futures[resource], f"describing config of {topic!r}")
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
        for future in self._broker.admin().incremental_alter_configs([resource]).values():
            admin_result(future, f"resetting config of {topic!r}")

    def topic_config(self, topic: str) -> dict[str, str]:
        resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
        futures = self._broker.admin().describe_configs([resource])
        entries = admin_result(futures[resource], f"describing config of {topic!r}")
        return {name: entry.value for name, entry in entries.items()}


def parse_topic_config(config: Mapping[str, object] | None) -> dict[str, str]:
    """Kafka topic configs are strings on the wire; accept ints and bools too."""
    if not config:
        return {}
    out: dict[str, str] = {}
    for key, value in config.items():
        out[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return out
