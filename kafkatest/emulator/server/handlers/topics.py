"""CreateTopics, DeleteTopics, CreatePartitions, DeleteRecords.

Any broker accepts these (a KRaft broker forwards them to the controller), so
clients that send admin requests to the controller or to any node both work.
"""

from __future__ import annotations

import functools
from collections import Counter
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.pacing import Pacer
from kafkatest.emulator.server.repeats import Encoded, each_partition
from kafkatest.emulator.server.responses import error_code_of, make, respond, response_types
from kafkatest.emulator.state.broker_configs import broker_configs
from kafkatest.emulator.state.errors import (
    BatchTooLarge,
    InvalidReplicaAssignment,
    InvalidRequest,
    PolicyViolation,
    StateError,
)
from kafkatest.emulator.state.topic_configs import INTERNAL_TOPIC_CONFIGS, describe_topic_configs
from kafkatest.emulator.state.topics import (
    MAX_PARTITIONS_PER_REQUEST,
    MAX_RECORDS_PER_REQUEST,
    TOO_MANY_PARTITIONS,
    TOO_MANY_RECORDS,
    check_replica_assignments,
    creation_records,
)

_TOPIC_CONFIG_SOURCE = 1


@handles(19, 2, 7)
async def create_topics(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    pacer = Pacer()  # each topic is created, the loop given back between them
    refusal = await _refusal_of_the_whole_request(ctx, request, pacer)
    results = Encoded()
    if refusal is not None:
        for wanted in request.topics:
            results.add(_creation_failed(types, wanted.name, refusal))
            await pacer.breathe()
        return respond(types.CreateTopicsResponse, topics=results.items())
    names = Counter(t.name for t in request.topics)
    for wanted in request.topics:
        await pacer.breathe()
        try:
            if names[wanted.name] > 1:
                raise InvalidRequest(f"Duplicate topic name {wanted.name} in the request")
            assigned = _manual_assignments(ctx, wanted) if wanted.assignments else None
            configs = {c.name: c.value for c in wanted.configs}
            topic = ctx.state.create_topic(
                wanted.name,
                wanted.num_partitions,
                wanted.replication_factor,
                configs,
                validate_only=request.validate_only,
                assignments=assigned,
            )
        except StateError as exc:
            results.add(_creation_failed(types, wanted.name, exc))
            continue
        partitions = (
            len(topic.partitions)
            if topic
            else (wanted.num_partitions if wanted.num_partitions > 0 else 1)
        )
        overrides = topic.overrides if topic else configs
        results.add(
            respond(
                types.CreatableTopicResult,
                name=wanted.name,
                topic_id=topic.topic_id if topic else None,
                num_partitions=partitions,
                replication_factor=1,
                configs=_described_configs(ctx, types, overrides),
            )
        )
    return respond(types.CreateTopicsResponse, topics=results.items())


async def _refusal_of_the_whole_request(
    ctx: RequestContext, request: Any, pacer: Pacer
) -> StateError | None:
    """Kafka's controller limits on one CreateTopics, checked before any topic is made.

    Every topic then gets the same POLICY_VIOLATION, as from Kafka, where these
    checks throw out of the whole request.
    """
    default = ctx.state.settings.num_partitions
    asked = 0
    for wanted in request.topics:
        if wanted.assignments:
            asked += len(wanted.assignments)
        elif wanted.num_partitions == -1:
            asked += default
        elif wanted.num_partitions > 0:
            asked += wanted.num_partitions
    if asked > MAX_PARTITIONS_PER_REQUEST:
        return PolicyViolation(TOO_MANY_PARTITIONS)
    records = 0
    for wanted in request.topics:
        await pacer.breathe()
        configs = {c.name: c.value for c in wanted.configs}
        try:
            ctx.state.create_topic(
                wanted.name, wanted.num_partitions, wanted.replication_factor, configs, True
            )
        except StateError:
            continue  # refused on its own: it writes nothing
        partitions = default if wanted.num_partitions == -1 else wanted.num_partitions
        records += creation_records(partitions, configs)
    if records > MAX_RECORDS_PER_REQUEST:
        return PolicyViolation(TOO_MANY_RECORDS)
    return None


def _creation_failed(types: Any, name: str, exc: StateError) -> Any:
    return respond(
        types.CreatableTopicResult,
        error_code_of(exc),
        str(exc),
        name=name,
        topic_id=None,
        num_partitions=-1,
        replication_factor=-1,
        configs=None,
    )


def _manual_assignments(ctx: RequestContext, wanted: Any) -> list[list[int]]:
    """A CreateTopics replica assignment, refused in Kafka's controller's words."""
    if wanted.replication_factor != -1:
        raise InvalidRequest(
            "A manual partition assignment was specified, but replication factor was not set to -1."
        )
    if wanted.num_partitions != -1:
        raise InvalidRequest(
            "A manual partition assignment was specified, but numPartitions was not set to -1."
        )
    for expected, assignment in enumerate(wanted.assignments):
        if assignment.partition_index != expected:
            raise InvalidReplicaAssignment(
                "partitions should be a consecutive 0-based integer sequence"
            )
    lists = [list(a.broker_ids) for a in wanted.assignments]
    factor = len(lists[0]) if lists and lists[0] else None
    return check_replica_assignments(ctx.state.cluster.broker_ids, lists, factor)


def _described_configs(
    ctx: RequestContext, types: Any, overrides: dict[str, str]
) -> tuple[Any, ...] | None:
    """CreateTopics v5+ returns the new topic's configs as DescribeConfigs would show
    them (value and source: the topic's own, a broker level's, or Kafka's default),
    and an internal one (`internal.segment.bytes`) only when the request set it."""
    if not hasattr(types, "CreatableTopicConfigs"):
        return None
    overrides = {name: value for name, value in overrides.items() if value is not None}
    levels = ctx.state.broker_configs
    entries = broker_configs(levels.layers(ctx.broker_id))
    shown = [
        (entry.name, entry.value, entry.source)
        for entry in describe_topic_configs(
            overrides, {e.name: e.synonyms for e in entries}, levels.topic_default
        )
    ]
    shown += [
        (name, overrides[name], _TOPIC_CONFIG_SOURCE)
        for name in INTERNAL_TOPIC_CONFIGS
        if name in overrides
    ]
    return tuple(
        make(
            types.CreatableTopicConfigs,
            name=name,
            value=value,
            read_only=False,
            config_source=source,
            is_sensitive=False,
        )
        for name, value, source in sorted(shown)
    )


@handles(20, 1, 6)
async def delete_topics(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    if hasattr(request, "topics"):
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(name, None) for name in request.topic_names]
    results = Encoded()
    pacer = Pacer()
    for name, topic_id in wanted:
        await pacer.breathe()
        try:
            if name is None and topic_id is not None:
                name = ctx.state.topics.by_id(topic_id).name
            topic = ctx.state.delete_topic(name)
            code, message, topic_id = ErrorCode.none, None, topic.topic_id
        except StateError as exc:
            code, message = error_code_of(exc), str(exc)
        results.add(
            respond(types.DeletableTopicResult, code, message, name=name, topic_id=topic_id)
        )
    return respond(types.DeleteTopicsResponse, responses=results.items())


@handles(37, 0, 3)
async def create_partitions(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    results = Encoded()
    #: New partitions this request may still add: Kafka's controller writes one record
    #: per new partition, at most MAX_RECORDS_PER_REQUEST for the whole request.
    budget = MAX_RECORDS_PER_REQUEST
    pacer = Pacer()
    for wanted in request.topics:
        await pacer.breathe()
        message: str | None
        try:
            topic = ctx.state.topics.get(wanted.name)
            adding = wanted.count - len(topic.partitions)
            if adding > budget:
                budget = 0  # Kafka's record list is full: later growth fails too
                raise BatchTooLarge(
                    f"cannot add {adding} partitions to {wanted.name} in one request: "
                    f"Kafka's controller writes at most {MAX_RECORDS_PER_REQUEST} at once"
                )
            assigned = None
            if wanted.assignments is not None and adding > 0:
                if len(wanted.assignments) != adding:
                    raise InvalidReplicaAssignment(
                        f"Attempted to add {adding} additional partition(s), but only "
                        f"{len(wanted.assignments)} assignment(s) were specified."
                    )
                assigned = check_replica_assignments(
                    ctx.state.cluster.live_broker_ids,
                    [list(a.broker_ids) for a in wanted.assignments],
                    len(topic.partitions[0].replicas),
                )
            ctx.state.add_partitions(wanted.name, wanted.count, request.validate_only)
            if assigned is not None and not request.validate_only:
                # Brand-new partitions start where the assignment puts them.
                for partition, chosen in zip(topic.partitions[-adding:], assigned, strict=True):
                    partition.replicas, partition.isr = list(chosen), list(chosen)
                    partition.leader_id = chosen[0]
            budget -= adding
            code, message = ErrorCode.none, None
        except StateError as exc:
            # Kafka's overflow is not an ApiException: it answers with no message.
            code = error_code_of(exc)
            message = None if isinstance(exc, BatchTooLarge) else str(exc)
        results.add(respond(types.CreatePartitionsTopicResult, code, message, name=wanted.name))
    return respond(types.CreatePartitionsResponse, results=results.items())


@handles(21, 0, 2)
async def delete_records(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    topics = await each_partition(
        request.topics,
        lambda topic: topic.partitions,
        functools.partial(_delete_records, ctx, types),
        lambda topic, partitions: make(
            types.DeleteRecordsTopicResult, name=topic.name, partitions=partitions
        ),
        Pacer(),
    )
    return respond(types.DeleteRecordsResponse, topics=topics)


def _delete_records(ctx: RequestContext, types: Any, wanted_topic: Any, wanted: Any) -> Any:
    try:
        topic = ctx.state.topics.get(wanted_topic.name)
        if topic.partition(wanted.partition_index).leader_id != ctx.broker_id:
            code, low = ErrorCode.not_leader_or_follower, -1
        else:
            low = ctx.state.delete_records(topic, wanted.partition_index, wanted.offset)
            code = ErrorCode.none
    except StateError as exc:
        code, low = error_code_of(exc), -1
    return respond(
        types.DeleteRecordsPartitionResult,
        code,
        partition_index=wanted.partition_index,
        low_watermark=low,
    )
