"""Metadata: brokers, controller, topics with ids, leaders and epochs.

Unknown topics are created here when the client allows it and the broker's
auto_create_topics setting does (librdkafka producers ask by default); as on a
KRaft broker, the answer that causes the creation still says the topic is unknown.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Set
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.operations_field import OPERATIONS_OMITTED, unrestricted_operations
from kafkatest.emulator.server.pacing import Pacer
from kafkatest.emulator.server.repeats import Encoded
from kafkatest.emulator.server.responses import error_code_of, make, respond, response_types
from kafkatest.emulator.state import EmulatorState
from kafkatest.emulator.state.acls import ResourceType
from kafkatest.emulator.state.errors import InvalidTopic, StateError
from kafkatest.emulator.state.replicas import NO_LEADER
from kafkatest.emulator.state.topics import Partition, Topic, is_internal_name, validate_topic_name

log = logging.getLogger("kafkatest.emulator")

#: Metadata reports a topic's authorized operations from v8, the cluster's in v8-10.
_TOPIC_OPERATIONS_SINCE = 8
_CLUSTER_OPERATIONS_UNTIL = 10


@handles(3, 0, 13)
async def metadata(ctx: RequestContext, request: Any) -> Any:
    state = ctx.state
    types = response_types(ctx)
    allow_create = getattr(request, "allow_auto_topic_creation", True)
    version = ctx.api_version
    operations = unrestricted_operations(
        ResourceType.TOPIC,
        version >= _TOPIC_OPERATIONS_SINCE
        and getattr(request, "include_topic_authorized_operations", False),
    )
    topics = Encoded()  # each topic encoded as it is described, between breaths
    pacer = Pacer()
    if request.topics is None or (version == 0 and not request.topics):
        for t in sorted(state.topics, key=lambda t: t.name):
            topics.add(describe_topic(types, t, state.cluster.stopped, operations))
            await pacer.breathe()
    else:
        # Kafka answers the set of topics named (`topics.asScala.toSet`): a topic
        # named twice, or 100,000 times, is described once.
        seen: set[tuple[str | None, Any]] = set()
        for wanted in request.topics:
            naming = (wanted.name, getattr(wanted, "topic_id", None))
            if naming in seen:
                continue
            seen.add(naming)
            topics.add(_lookup(ctx, types, wanted, allow_create, operations))
            await pacer.breathe()
    brokers = tuple(
        make(types.MetadataResponseBroker, node_id=n.node_id, host=n.host, port=n.port, rack=None)
        for n in state.cluster.listener_nodes(ctx.listener)
    )
    return respond(
        types.MetadataResponse,
        brokers=brokers,
        cluster_id=state.cluster.cluster_id,
        controller_id=state.cluster.controller_id,
        topics=topics.items(),
        cluster_authorized_operations=unrestricted_operations(
            ResourceType.CLUSTER,
            _TOPIC_OPERATIONS_SINCE <= version <= _CLUSTER_OPERATIONS_UNTIL
            and getattr(request, "include_cluster_authorized_operations", False),
        ),
    )


def _lookup(
    ctx: RequestContext, types: Any, wanted: Any, allow_create: bool, operations: int
) -> Any:
    """A topic asked for by name or id. Kafka reports the operations of every topic
    asked for by name, known or not, and of none it cannot find by id."""
    state: EmulatorState = ctx.state
    name = wanted.name
    topic_id = getattr(wanted, "topic_id", None)
    if name is None and topic_id is not None:
        try:
            return describe_topic(
                types, state.topics.by_id(topic_id), state.cluster.stopped, operations
            )
        except StateError as exc:
            return _topic_error(types, error_code_of(exc), None, topic_id, OPERATIONS_OMITTED)
    topic = state.topics.find(name)
    if topic is not None:
        return describe_topic(types, topic, state.cluster.stopped, operations)
    error = missing_topic_error(name)
    if error is ErrorCode.unknown_topic_or_partition and allow_create:
        _auto_create(state, name)
    return _topic_error(types, error, name, None, operations)


def _auto_create(state: EmulatorState, name: str) -> None:
    """Create `name` as a KRaft broker does on a client's behalf: the controller
    creates it after this answer, so the asking client still hears "unknown topic"
    now and finds the topic on its next Metadata request."""
    if not state.settings.auto_create_topics:
        return
    try:
        state.create_topic(name)
    except StateError as exc:
        log.info("auto-creating topic %s failed: %s", name, exc)


def missing_topic_error(name: str) -> ErrorCode:
    """Kafka's error for a topic it does not have: its name is invalid, or unknown."""
    try:
        validate_topic_name(name)
    except InvalidTopic:
        return ErrorCode.invalid_topic_exception
    return ErrorCode.unknown_topic_or_partition


def _topic_error(
    types: Any, error: ErrorCode, name: str | None, topic_id: Any, operations: int
) -> Any:
    """An unknown topic by name carries the all-zero id (kio writes None as that)."""
    return respond(
        types.MetadataResponseTopic,
        error,
        name=name,
        topic_id=topic_id,
        is_internal=is_internal_name(name),
        partitions=(),
        topic_authorized_operations=operations,
    )


def partition_fields(partition: Partition, stopped: Set[int] = frozenset()) -> dict[str, Any]:
    """A partition as Metadata and DescribeTopicPartitions describe it (`state.replicas`);
    a leaderless one with Kafka's LEADER_NOT_AVAILABLE."""
    leaderless = partition.leader_id == NO_LEADER
    return {
        "error_code": ErrorCode.leader_not_available if leaderless else ErrorCode.none,
        "partition_index": partition.index,
        "leader_id": partition.leader_id,
        "leader_epoch": partition.leader_epoch,
        "replica_nodes": tuple(partition.replicas),
        "isr_nodes": tuple(partition.isr),
        "offline_replicas": tuple(r for r in partition.replicas if r in stopped),
        "eligible_leader_replicas": (),
        "last_known_elr": (),
    }


def describe_topic(
    types: Any,
    topic: Topic,
    stopped: Set[int],
    operations: int,
    indexes: Iterable[int] | None = None,
) -> Any:
    """A topic as Metadata describes it (every partition), or as DescribeTopicPartitions
    does with its partitions at `indexes`."""
    if indexes is None:
        kinds = types.MetadataResponseTopic, types.MetadataResponsePartition
        indexes = range(len(topic.partitions))
    else:
        kinds = (
            types.DescribeTopicPartitionsResponseTopic,
            types.DescribeTopicPartitionsResponsePartition,
        )
    partitions = tuple(
        make(kinds[1], **partition_fields(topic.partitions[i], stopped)) for i in indexes
    )
    return respond(
        kinds[0],
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=topic.is_internal,
        partitions=partitions,
        topic_authorized_operations=operations,
    )
