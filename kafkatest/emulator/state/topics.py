"""Topics and their partitions: creation, deletion, growth and configs.

A topic id is a fresh UUID at every creation, so a deleted and recreated topic
is a different topic to clients that track ids (Java consumers do).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from kafkatest import limits
from kafkatest.emulator.state.cleaner import CleanerConfig
from kafkatest.emulator.state.errors import (
    BatchTooLarge,
    InvalidPartitions,
    InvalidReplicaAssignment,
    InvalidTopic,
    PolicyViolation,
    TopicAlreadyExists,
    UnknownTopicId,
    UnknownTopicOrPartition,
)
from kafkatest.emulator.state.log import PartitionLog
from kafkatest.emulator.state.segments import RollLimits
from kafkatest.emulator.state.topic_configs import (
    TOPIC_CONFIGS,
    check_topic_configs,
    validate_topic_config,
)

_LEGAL_NAME = re.compile(r"[a-zA-Z0-9._-]+")
MAX_NAME_LENGTH = 249
#: Kafka's controller refuses a CreateTopics whose topics ask for more partitions than
#: this in all...
MAX_PARTITIONS_PER_REQUEST = limits.MAX_PARTITIONS
#: ...and any admin request that would write more metadata records than this
#: (QuorumController.MAX_RECORDS_PER_USER_OP): one per topic, one per new partition,
#: one per config set. Both are checked before anything is allocated.
MAX_RECORDS_PER_REQUEST = 10_000
#: Kafka's answers (POLICY_VIOLATION) when a request passes those limits.
TOO_MANY_PARTITIONS = "Excessively large number of partitions per request."
TOO_MANY_RECORDS = "Unable to perform excessively large batch operation."
#: The names Kafka marks internal (its Topic.INTERNAL_TOPICS); a user topic named
#: ``__x`` is not internal, and an unknown one of these names still is.
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


def is_internal_name(name: str | None) -> bool:
    return name in INTERNAL_TOPICS


@dataclass(slots=True)
class Partition:
    """One partition: its leader, the leader's epoch (+1 at every leader change) and log.

    `replicas` and `isr` are what clients see of replication (`replicas.py` keeps
    them); the emulator holds one log, which every replica shares.
    """

    index: int
    #: -1 while no in-sync replica is up to lead (LEADER_NOT_AVAILABLE).
    leader_id: int
    log: PartitionLog = field(default_factory=PartitionLog)
    leader_epoch: int = 0
    #: The assigned brokers, the preferred leader first.
    replicas: list[int] = field(default_factory=list)
    #: The in-sync replicas, in Kafka's order (a broker that comes back goes last).
    isr: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.replicas:
            self.replicas = [self.leader_id]
        if not self.isr:
            self.isr = list(self.replicas)

    def elect(self, leader_id: int, epochs: int = 1) -> None:
        """A new leader election: the epoch moves on by `epochs` (a broker restart is
        two elections, leaderless then back) and the new epoch starts at the log end."""
        self.leader_id = leader_id
        self.leader_epoch += epochs
        self.log.epochs.assign(self.leader_epoch, self.log.log_end_offset)


class TopicDefaults(Protocol):
    """Where a topic's unset configs come from: the broker level (its `log.*` twins),
    which may change while the topic lives (`dynamic_broker_configs`)."""

    #: Moves on with every change of the broker level.
    version: int

    def topic_default(self, topic_config: str) -> str: ...


class KafkaDefaults:
    """Kafka's defaults only: a broker level nobody changes."""

    version = 0

    def topic_default(self, topic_config: str) -> str:
        return TOPIC_CONFIGS[topic_config].default


@dataclass(slots=True)
class Topic:
    name: str
    topic_id: uuid.UUID
    partitions: list[Partition]
    #: Configs set on this topic; the others come from `defaults` (the broker level).
    overrides: dict[str, str]
    leader_start: int = 0
    defaults: TopicDefaults = field(default_factory=KafkaDefaults, repr=False, compare=False)
    #: Every config's value and the settings derived from them, valid while
    #: `overrides` is the same dict (every config change puts a new dict in place)
    #: and the broker level has the same version: read on every append.
    _derived_overrides: dict[str, str] | None = field(default=None, repr=False, compare=False)
    _derived_version: int = field(default=-1, repr=False, compare=False)
    _values: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    _roll_limits: RollLimits = field(default_factory=RollLimits, repr=False, compare=False)
    _compacted: bool = field(default=False, repr=False, compare=False)

    @property
    def is_internal(self) -> bool:
        return is_internal_name(self.name)

    def config(self, name: str) -> str:
        """The topic's own value, else the broker level's (a public topic config)."""
        if self._derived_overrides is not self.overrides or (
            self._derived_version != self.defaults.version
        ):
            self._derive()
        return self._values[name]

    def int_config(self, name: str) -> int:
        return int(self.config(name))

    @property
    def roll_limits(self) -> RollLimits:
        """When to roll a segment."""
        self.config("segment.ms")  # derives them if stale
        return self._roll_limits

    @property
    def compacted(self) -> bool:
        """cleanup.policy holds `compact`."""
        self.config("cleanup.policy")  # derives it if stale
        return self._compacted

    def _derive(self) -> None:
        overrides, defaults = self.overrides, self.defaults
        values = {
            name: overrides[name] if name in overrides else defaults.topic_default(name)
            for name in TOPIC_CONFIGS
        }
        internal = overrides.get("internal.segment.bytes")
        segment_bytes = int(internal) if internal else int(values["segment.bytes"])
        compacted = "compact" in [p.strip() for p in values["cleanup.policy"].split(",")]
        segment_ms = int(values["segment.ms"])
        # Kafka's LogConfig.maxSegmentMs: a compacted topic's segments also roll by
        # max.compaction.lag.ms, so the cleaner can reach records that old.
        max_lag = int(values["max.compaction.lag.ms"])
        roll_ms = min(max_lag, segment_ms) if compacted and max_lag > 0 else segment_ms
        jitter = min(int(values["segment.jitter.ms"]), segment_ms)
        self._values, self._compacted = values, compacted
        self._roll_limits = RollLimits(segment_bytes, roll_ms, jitter)
        self._derived_overrides, self._derived_version = overrides, defaults.version

    def cleaner_config(self) -> CleanerConfig:
        return CleanerConfig(
            min_cleanable_ratio=float(self.config("min.cleanable.dirty.ratio")),
            min_compaction_lag_ms=self.int_config("min.compaction.lag.ms"),
            max_compaction_lag_ms=self.int_config("max.compaction.lag.ms"),
            delete_retention_ms=self.int_config("delete.retention.ms"),
            segment_bytes=self.roll_limits.segment_bytes,
        )

    def partition(self, index: int) -> Partition:
        if not 0 <= index < len(self.partitions):
            raise UnknownTopicOrPartition(f"topic {self.name} has no partition {index}")
        return self.partitions[index]


def check_replica_assignments(
    brokers: list[int], assignments: list[list[int]], factor: int | None = None
) -> list[list[int]]:
    """Manually assigned replica lists, or Kafka's controller's refusal (its words)."""
    for replicas in assignments:
        if not replicas:
            raise InvalidReplicaAssignment(
                "The manual partition assignment includes an empty replica list."
            )
        for broker in replicas:
            if broker not in brokers:
                raise InvalidReplicaAssignment(
                    f"The manual partition assignment includes broker {broker}, but no such "
                    "broker is registered."
                )
        if len(set(replicas)) != len(replicas):
            duplicate = next(b for b in replicas if replicas.count(b) > 1)
            raise InvalidReplicaAssignment(
                f"The manual partition assignment includes the broker {duplicate} more than once."
            )
        if factor is not None and len(replicas) != factor:
            raise InvalidReplicaAssignment(
                f"The manual partition assignment includes a partition with {len(replicas)} "
                f"replica(s), but this is not consistent with previous partitions, which have "
                f"{factor} replica(s)."
            )
    return [list(replicas) for replicas in assignments]


def detect_invalid_topic(name: str) -> str | None:
    """Why Kafka's `Topic.validate` refuses `name` (its words), or None; the config
    APIs and DescribeConfigs say it this way, CreateTopics as `validate_topic_name`."""
    if name == "":
        return "the empty string is not allowed"
    if name in (".", ".."):
        return f"'{name}' is not allowed"
    if len(name) > MAX_NAME_LENGTH:
        return f"the length of '{name}' is longer than the max allowed length {MAX_NAME_LENGTH}"
    if not _LEGAL_NAME.fullmatch(name):
        return f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    return None


def validate_topic_name(name: str | None) -> str:
    if not name:
        raise InvalidTopic("Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise InvalidTopic(f'Topic name cannot be "{name}"')
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidTopic(f"Topic name is illegal, it can't be longer than {MAX_NAME_LENGTH}")
    if not _LEGAL_NAME.fullmatch(name):
        raise InvalidTopic(
            f'Topic name "{name}" is illegal, it contains a character other than '
            "ASCII alphanumerics, '.', '_' and '-'"
        )
    return name


def creation_records(partitions: int, configs: Mapping[str, str | None]) -> int:
    """Metadata records Kafka's controller writes to create a topic."""
    return 1 + partitions + sum(1 for value in configs.values() if value is not None)


class TopicRegistry:
    def __init__(self, defaults: TopicDefaults | None = None) -> None:
        #: The broker level every topic of this registry falls back on.
        self.defaults: TopicDefaults = defaults or KafkaDefaults()
        self._by_name: dict[str, Topic] = {}
        self._by_id: dict[uuid.UUID, Topic] = {}

    def __iter__(self) -> Iterator[Topic]:
        return iter(list(self._by_name.values()))

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def get(self, name: str) -> Topic:
        topic = self._by_name.get(name)
        if topic is None:
            raise UnknownTopicOrPartition(f"This server does not host this topic: {name}")
        return topic

    def find(self, name: str) -> Topic | None:
        return self._by_name.get(name)

    def has_partition(self, name: str, index: int) -> bool:
        topic = self._by_name.get(name)
        return topic is not None and 0 <= index < len(topic.partitions)

    def find_by_id(self, topic_id: uuid.UUID) -> Topic | None:
        return self._by_id.get(topic_id)

    def by_id(self, topic_id: uuid.UUID) -> Topic:
        topic = self._by_id.get(topic_id)
        if topic is None:
            raise UnknownTopicId(f"unknown topic id {topic_id}")
        return topic

    @staticmethod
    def check_new(name: str, partitions: int, configs: Mapping[str, str | None]) -> dict[str, str]:
        """Validate a creation without doing it (CreateTopics validate_only)."""
        validate_topic_name(name)
        if partitions <= 0:
            raise InvalidPartitions(
                "Number of partitions was set to an invalid non-positive value."
            )
        if partitions > MAX_PARTITIONS_PER_REQUEST:
            raise PolicyViolation(TOO_MANY_PARTITIONS)
        if creation_records(partitions, configs) > MAX_RECORDS_PER_REQUEST:
            raise PolicyViolation(TOO_MANY_RECORDS)
        return check_topic_configs(
            {key: validate_topic_config(key, value) for key, value in configs.items()}
        )

    def check_absent(self, name: str) -> None:
        if name in self._by_name:
            raise TopicAlreadyExists(f"Topic '{name}' already exists.")

    @staticmethod
    def check_growth(topic: Topic, total: int) -> None:
        # Kafka's (KRaft controller's) own wording, which tools print to users.
        current = len(topic.partitions)
        if total < current:
            raise InvalidPartitions(
                f"The topic {topic.name} currently has {current} partition(s); "
                f"{total} would not be an increase."
            )
        if total == current:
            raise InvalidPartitions(f"Topic already has {current} partition(s).")
        if total - current > MAX_RECORDS_PER_REQUEST:
            raise BatchTooLarge(
                f"cannot add {total - current} partitions to {topic.name} in one request: "
                f"Kafka's controller writes at most {MAX_RECORDS_PER_REQUEST} at once"
            )

    def create(
        self,
        name: str,
        partitions: int,
        replicas: list[list[int]],
        configs: Mapping[str, str | None],
        leader_start: int = 0,
    ) -> Topic:
        self.check_absent(name)
        overrides = self.check_new(name, partitions, configs)
        topic = Topic(
            name=name,
            topic_id=_new_topic_id(),
            partitions=[_partition(i, replicas[i]) for i in range(partitions)],
            overrides=overrides,
            leader_start=leader_start,
            defaults=self.defaults,
        )
        self._by_name[name] = topic
        self._by_id[topic.topic_id] = topic
        return topic

    def delete(self, name: str) -> Topic:
        topic = self.get(name)
        del self._by_name[name]
        del self._by_id[topic.topic_id]
        return topic

    def add_partitions(self, name: str, total: int, replicas: list[list[int]]) -> Topic:
        topic = self.get(name)
        self.check_growth(topic, total)
        current = len(topic.partitions)
        topic.partitions.extend(_partition(i, replicas[i - current]) for i in range(current, total))
        return topic


def _partition(index: int, replicas: list[int]) -> Partition:
    return Partition(index, replicas[0], replicas=list(replicas), isr=list(replicas))


def _new_topic_id() -> uuid.UUID:
    """Kafka never hands out the all-zero id or ids that start with '-' in base64."""
    while True:
        topic_id = uuid.uuid4()
        if topic_id.bytes[0] < 0xF8:
            return topic_id
