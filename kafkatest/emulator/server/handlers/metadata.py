"""Metadata: brokers, controller, topics with ids, leaders and epochs.

Unknown topics are created here when the client allows it and the broker's
auto_create_topics setting does (librdkafka producers ask by default).
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.responses import NO_THROTTLE, error_code_of, make, response_types
from kafkatest.emulator.state import EmulatorState
from kafkatest.emulator.state.broker_state import LEADER_EPOCH
from kafkatest.emulator.state.errors import StateError, UnknownTopicOrPartition
from kafkatest.emulator.state.topics import Partition, Topic

#: Kafka's "authorized operations not requested".
_OPERATIONS_OMITTED = -(2**31)


@handles(3, 0, 12)
async def metadata(ctx: RequestContext, request: Any) -> Any:
    state = ctx.state
    types = response_types(ctx)
    allow_create = getattr(request, "allow_auto_topic_creation", True)
    topics: list[Any] = []
    if request.topics is None or (ctx.api_version == 0 and not request.topics):
        topics = [_describe(types, t) for t in sorted(state.topics, key=lambda t: t.name)]
    else:
        for wanted in request.topics:
            topics.append(_lookup(ctx, types, wanted, allow_create))
    brokers = tuple(
        make(types.MetadataResponseBroker, node_id=n.node_id, host=n.host, port=n.port, rack=None)
        for n in state.cluster.nodes
    )
    return make(
        types.MetadataResponse,
        throttle_time=NO_THROTTLE,
        brokers=brokers,
        cluster_id=state.cluster.cluster_id,
        controller_id=state.cluster.controller_id,
        topics=tuple(topics),
        cluster_authorized_operations=_OPERATIONS_OMITTED,
    )


def _lookup(ctx: RequestContext, types: Any, wanted: Any, allow_create: bool) -> Any:
    state: EmulatorState = ctx.state
    name = wanted.name
    topic_id = getattr(wanted, "topic_id", None)
    try:
        if name is None and topic_id is not None:
            return _describe(types, state.topics.by_id(topic_id))
        topic = state.topics.find(name)
        if topic is None and allow_create and state.settings.auto_create_topics:
            topic = state.create_topic(name)
        if topic is None:
            raise UnknownTopicOrPartition(f"unknown topic {name}")
        return _describe(types, topic)
    except StateError as exc:
        return make(
            types.MetadataResponseTopic,
            error_code=error_code_of(exc),
            name=name,
            topic_id=topic_id,
            is_internal=False,
            partitions=(),
            topic_authorized_operations=_OPERATIONS_OMITTED,
        )


def partition_fields(partition: Partition) -> dict[str, Any]:
    """A partition as Metadata and DescribeTopicPartitions describe it: one replica,
    so the leader is the whole ISR and no other replica is ever eligible to lead."""
    return {
        "error_code": ErrorCode.none,
        "partition_index": partition.index,
        "leader_id": partition.leader_id,
        "leader_epoch": LEADER_EPOCH,
        "replica_nodes": (partition.leader_id,),
        "isr_nodes": (partition.leader_id,),
        "offline_replicas": (),
        "eligible_leader_replicas": (),
        "last_known_elr": (),
    }


def _describe(types: Any, topic: Topic) -> Any:
    partitions = tuple(
        make(types.MetadataResponsePartition, **partition_fields(p)) for p in topic.partitions
    )
    return make(
        types.MetadataResponseTopic,
        error_code=ErrorCode.none,
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=topic.is_internal,
        partitions=partitions,
        topic_authorized_operations=_OPERATIONS_OMITTED,
    )
