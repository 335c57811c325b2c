"""ConsumerGroupHeartbeat and ConsumerGroupDescribe: the KIP-848 consumer group protocol.

Handlers translate kio entities to `state.consumer_groups` calls through the group
namespace (`state.group_namespace`), which decides whether an id is a classic or a
consumer group. The coordinator is created on first use, on the broker's clock.
"""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.handlers.groups import client_host, is_coordinator, namespace_of
from kafkatest.emulator.server.operations_field import OPERATIONS_OMITTED, unrestricted_operations
from kafkatest.emulator.server.repeats import Answers
from kafkatest.emulator.server.responses import make, make_from, respond, response_types
from kafkatest.emulator.state.acls import ResourceType
from kafkatest.emulator.state.groups.consumer.model import (
    HeartbeatRequest,
    HeartbeatResult,
    Partitions,
)

#: ConsumerGroupDescribe v1 MemberType of a member speaking the classic / consumer protocol.
_CLASSIC_MEMBER, _CONSUMER_MEMBER = 0, 1


def _owned(request: Any) -> Partitions | None:
    if request.topic_partitions is None:
        return None
    owned: dict[uuid.UUID, frozenset[int]] = {}
    for topic in request.topic_partitions:
        if topic.topic_id is not None:
            owned[topic.topic_id] = owned.get(topic.topic_id, frozenset()) | set(topic.partitions)
    return owned


@handles(68, 0, 1)
async def consumer_group_heartbeat(ctx: RequestContext, request: Any) -> Any:
    if not ctx.state.features.consumer_protocol_enabled:
        result = HeartbeatResult(error=ErrorCode.unsupported_version)
    elif not is_coordinator(ctx, request.group_id):
        result = HeartbeatResult(error=ErrorCode.not_coordinator)
    else:
        names = request.subscribed_topic_names
        heartbeat = HeartbeatRequest(
            group_id=request.group_id,
            member_id=request.member_id,
            member_epoch=request.member_epoch,
            instance_id=request.instance_id,
            rack_id=request.rack_id,
            rebalance_timeout_ms=request.rebalance_timeout // datetime.timedelta(milliseconds=1),
            subscribed_topic_names=None if names is None else tuple(names),
            subscribed_topic_regex=getattr(request, "subscribed_topic_regex", None),
            server_assignor=request.server_assignor,
            owned=_owned(request),
            client_id=ctx.client_id or "",
            client_host=client_host(ctx),
            version=ctx.api_version,
            topic_visible=ctx.topic_visible,
        )
        result = namespace_of(ctx.state).heartbeat(heartbeat)
    types = response_types(ctx)
    assignment = None
    if result.assignment is not None:
        assignment = make(
            types.Assignment,
            topic_partitions=tuple(
                make(types.TopicPartitions, topic_id=topic_id, partitions=tuple(sorted(parts)))
                for topic_id, parts in result.assignment.items()
            ),
        )
    return respond(
        types.ConsumerGroupHeartbeatResponse,
        result.error,
        result.message,
        member_id=result.member_id,
        member_epoch=result.member_epoch,
        heartbeat_interval=datetime.timedelta(milliseconds=result.heartbeat_interval_ms),
        assignment=assignment,
    )


@handles(69, 0, 1)
async def consumer_group_describe(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    operations = unrestricted_operations(ResourceType.GROUP, request.include_authorized_operations)
    # Each group named is answered; one named many times is described once.
    answers: Answers[str] = Answers()
    groups = await answers.each(
        request.group_ids, str, lambda group_id: _describe(ctx, types, group_id, operations)
    )
    return respond(types.ConsumerGroupDescribeResponse, groups=groups)


def refused_group(types: Any, group_id: str, error: ErrorCode, message: str | None = None) -> Any:
    """A DescribedGroup of ConsumerGroupDescribe (or ShareGroupDescribe) that
    Kafka answers with an error: the id, the error and empty fields."""
    return respond(
        types.DescribedGroup,
        error,
        message,
        group_id=group_id,
        group_state="",
        group_epoch=0,
        assignment_epoch=0,
        assignor_name="",
        members=(),
        authorized_operations=OPERATIONS_OMITTED,
    )


def _describe(ctx: RequestContext, types: Any, group_id: str, operations: int) -> Any:
    def refused(error: ErrorCode, message: str | None = None) -> Any:
        return refused_group(types, group_id, error, message)

    if not ctx.state.features.consumer_protocol_enabled:
        return refused(ErrorCode.unsupported_version)
    if not is_coordinator(ctx, group_id):
        return refused(ErrorCode.not_coordinator)
    if not group_id:
        return refused(ErrorCode.invalid_group_id)
    namespace = namespace_of(ctx.state)
    group = namespace.consumer_group(group_id)
    if group is None:
        if namespace.classic_state(group_id) is not None:
            return refused(
                ErrorCode.group_id_not_found, f"Group {group_id} is not a consumer group."
            )
        return refused(ErrorCode.group_id_not_found, f"Group {group_id} not found.")
    consumer = namespace.consumer

    def partitions(assigned: Partitions) -> Any:
        return make(
            types.Assignment,
            topic_partitions=tuple(
                make(
                    types.TopicPartitions,
                    topic_id=topic_id,
                    topic_name=name,
                    partitions=tuple(sorted(parts)),
                )
                for topic_id, name, parts in consumer.known_partitions(assigned)
            ),
        )

    members = tuple(
        make_from(
            types.Member,
            m,
            assignment=partitions(m.assigned),
            target_assignment=partitions(group.targets.get(m.member_id, {})),
            member_type=_CONSUMER_MEMBER if m.classic is None else _CLASSIC_MEMBER,
        )
        for m in group.members.values()
    )
    return respond(
        types.DescribedGroup,
        group_id=group_id,
        group_state=group.state.value,
        group_epoch=group.group_epoch,
        assignment_epoch=group.assignment_epoch,
        assignor_name=group.preferred_assignor(consumer.config.assignors[0]),
        members=members,
        authorized_operations=operations,
    )
