"""``__consumer_offsets``: created on first group use, and where groups live.

Kafka creates the offsets topic when a client first looks up a group
coordinator (the lookup that finds it missing answers COORDINATOR_NOT_AVAILABLE
and clients retry), with ``offsets.topic.num.partitions`` partitions and compacted
configs. A group's coordinator is the leader of partition
``abs(groupId.hashCode()) % partitions``. The emulator keeps committed offsets and
groups in memory and also writes them into this topic as Kafka's records
(`group_records`), so Metadata, tools, regex subscriptions and readers of the topic
see what they see on Kafka.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Protocol

from kafkatest.emulator.state.broker_settings import BrokerSettings
from kafkatest.emulator.state.cluster import Cluster
from kafkatest.emulator.state.topics import Topic, TopicRegistry


class OffsetsTopicHost(Protocol):
    """What placing groups needs of the broker state (`EmulatorState` is one): its
    topics, settings and cluster, and creating a topic. Named here, not imported,
    so this module stays below the state object that uses it."""

    @property
    def topics(self) -> TopicRegistry: ...
    @property
    def settings(self) -> BrokerSettings: ...
    @property
    def cluster(self) -> Cluster: ...

    def create_topic(
        self,
        name: str,
        partitions: int = -1,
        replication_factor: int = -1,
        configs: Mapping[str, str | None] | None = None,
    ) -> Topic | None: ...


OFFSETS_TOPIC = "__consumer_offsets"

#: GroupCoordinatorService.groupMetadataTopicConfigs (segment.bytes is
#: offsets.topic.segment.bytes, 100 MiB).
OFFSETS_TOPIC_CONFIGS = {
    "cleanup.policy": "compact",
    "compression.type": "producer",
    "segment.bytes": "104857600",
}


@lru_cache(maxsize=4096)
def java_string_hash(text: str) -> int:
    """Java's String.hashCode (signed 32 bits; UTF-16 code units). Kept for the ids
    seen last: a group's every request hashes its id, a character at a time."""
    data = text.encode("utf-16-be")
    value = 0
    for i in range(0, len(data), 2):
        value = (31 * value + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def partition_for(group_id: str, partitions: int) -> int:
    """Kafka's Utils.abs(hashCode) % partitions (Utils.abs maps Int.MIN_VALUE to 0)."""
    value = java_string_hash(group_id)
    return (0 if value == -(2**31) else abs(value)) % partitions


def ensure_offsets_topic(state: OffsetsTopicHost) -> bool:
    """Create the offsets topic if missing; whether it existed already."""
    if OFFSETS_TOPIC in state.topics:
        return True
    state.create_topic(
        OFFSETS_TOPIC,
        partitions=state.settings.offsets_topic_num_partitions,
        # As kafkatest's Kafka clusters set offsets.topic.replication.factor: groups
        # survive a broker's loss when there are brokers to spare.
        replication_factor=min(3, len(state.cluster.live_broker_ids)),
        configs=OFFSETS_TOPIC_CONFIGS,
    )
    return False


def group_coordinator(state: OffsetsTopicHost, group_id: str) -> int:
    """The broker coordinating `group_id`: the leader of its offsets partition (before
    the topic exists, a broker chosen by the same hash)."""
    topic: Topic | None = state.topics.find(OFFSETS_TOPIC)
    if topic is None:
        return state.cluster.coordinator_for(group_id)
    return topic.partitions[partition_for(group_id, len(topic.partitions))].leader_id
