"""JoinGroup, SyncGroup, Heartbeat and LeaveGroup: the classic group membership APIs.

Handlers only translate between kio entities and `state.groups`; every rule lives
in the coordinator, which the broker state builds with its timers on the broker's
clock, so that a test advancing that clock also expires group sessions.
"""

from __future__ import annotations

import datetime
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.pacing import Pacer
from kafkatest.emulator.server.repeats import Encoded
from kafkatest.emulator.server.responses import make_from, respond, response_types
from kafkatest.emulator.state import EmulatorState
from kafkatest.emulator.state.groups.classic.coordinator import GroupCoordinator
from kafkatest.emulator.state.groups.classic.model import (
    JoinRequest,
    JoinResult,
    LeaveResult,
    LeavingMember,
    Protocol,
    SyncResult,
)
from kafkatest.emulator.state.groups.migration import GroupMigration
from kafkatest.emulator.state.groups.namespace import GroupNamespace
from kafkatest.emulator.state.internal_topics import group_coordinator

#: JoinGroup v4 introduced MEMBER_ID_REQUIRED for members without an id.
_KNOWN_MEMBER_ID_SINCE = 4
#: JoinGroup v7 made protocol_type/protocol_name nullable.
_NULLABLE_PROTOCOL_SINCE = 7
#: SyncGroup v5 requires them (null: INCONSISTENT_GROUP_PROTOCOL).
_SYNC_PROTOCOL_REQUIRED_SINCE = 5


def coordinator_of(state: EmulatorState) -> GroupCoordinator:
    """The classic group coordinator (built with the broker state)."""
    return state.groups


def namespace_of(state: EmulatorState) -> GroupNamespace:
    """Both group coordinators of this broker state behind one group id namespace."""
    classic, consumer = state.groups, state.consumer_groups
    return GroupNamespace(classic, consumer, state.offsets, GroupMigration(classic, consumer))


def is_coordinator(ctx: RequestContext, group_id: str) -> bool:
    """With several emulated brokers, only the group's coordinator may answer for it."""
    return group_coordinator(ctx.state, group_id) == ctx.broker_id


def millis(delta: datetime.timedelta) -> int:
    return delta // datetime.timedelta(milliseconds=1)


def client_host(ctx: RequestContext) -> str:
    """Kafka shows a member's address as "/host"."""
    return "/" + ctx.peer.rsplit(":", 1)[0].strip("[]")


@handles(11, 0, 9)
async def join_group(ctx: RequestContext, request: Any) -> Any:
    if not is_coordinator(ctx, request.group_id):
        result = JoinResult(ErrorCode.not_coordinator, request.member_id)
        return _join_response(ctx, result)
    session_ms = millis(request.session_timeout)
    rebalance = getattr(request, "rebalance_timeout", None)
    join = JoinRequest(
        group_id=request.group_id,
        member_id=request.member_id,
        group_instance_id=getattr(request, "group_instance_id", None),
        client_id=ctx.client_id or "",
        client_host=client_host(ctx),
        session_timeout_ms=session_ms,
        # v0 has no rebalance timeout: the session timeout served for both.
        rebalance_timeout_ms=millis(rebalance) if rebalance is not None else session_ms,
        protocol_type=request.protocol_type,
        protocols=tuple(Protocol(p.name, p.metadata) for p in request.protocols),
        require_known_member_id=ctx.api_version >= _KNOWN_MEMBER_ID_SINCE,
    )
    namespace = namespace_of(ctx.state)
    consumer_group = namespace.live_consumer_group(request.group_id)
    if consumer_group is not None:
        return _join_response(ctx, namespace.classic_members.join(consumer_group, join))
    result = await coordinator_of(ctx.state).join_group(join)
    return _join_response(ctx, result)


def _join_response(ctx: RequestContext, result: JoinResult) -> Any:
    types = response_types(ctx)
    nullable = ctx.api_version >= _NULLABLE_PROTOCOL_SINCE
    members = tuple(make_from(types.JoinGroupResponseMember, m) for m in result.members)
    return respond(
        types.JoinGroupResponse,
        result.error,
        generation_id=result.generation_id,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name if nullable else (result.protocol_name or ""),
        leader=result.leader_id,
        skip_assignment=result.skip_assignment,
        member_id=result.member_id,
        members=members,
    )


@handles(14, 0, 5)
async def sync_group(ctx: RequestContext, request: Any) -> Any:
    namespace = namespace_of(ctx.state)
    consumer_group = namespace.consumer_group(request.group_id)
    if ctx.api_version >= _SYNC_PROTOCOL_REQUIRED_SINCE and (
        request.protocol_type is None or request.protocol_name is None
    ):
        # Kafka refuses it before anything else: from v5 both fields are mandatory.
        result = SyncResult(ErrorCode.inconsistent_group_protocol)
    elif not is_coordinator(ctx, request.group_id):
        result = SyncResult(ErrorCode.not_coordinator)
    elif consumer_group is not None:
        result = namespace.classic_members.sync(
            consumer_group,
            request.member_id,
            getattr(request, "group_instance_id", None),
            request.generation_id,
            getattr(request, "protocol_type", None),
            getattr(request, "protocol_name", None),
        )
    else:
        result = await coordinator_of(ctx.state).sync_group(
            request.group_id,
            request.member_id,
            request.generation_id,
            group_instance_id=getattr(request, "group_instance_id", None),
            protocol_type=getattr(request, "protocol_type", None),
            protocol_name=getattr(request, "protocol_name", None),
            assignments={a.member_id: a.assignment for a in request.assignments},
        )
    return respond(
        response_types(ctx).SyncGroupResponse,
        result.error,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name,
        assignment=result.assignment,
    )


@handles(12, 0, 4)
async def heartbeat(ctx: RequestContext, request: Any) -> Any:
    namespace = namespace_of(ctx.state)
    consumer_group = namespace.consumer_group(request.group_id)
    instance_id = getattr(request, "group_instance_id", None)
    if not is_coordinator(ctx, request.group_id):
        error = ErrorCode.not_coordinator
    elif consumer_group is not None:
        error = namespace.classic_members.heartbeat(
            consumer_group, request.member_id, instance_id, request.generation_id
        )
    else:
        error = coordinator_of(ctx.state).heartbeat(
            request.group_id, request.member_id, request.generation_id, instance_id
        )
    return respond(response_types(ctx).HeartbeatResponse, error)


@handles(13, 0, 5)
async def leave_group(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    batched = hasattr(request, "members")  # v3+ leaves several members at once
    if batched:
        leaving = [LeavingMember(m.member_id, m.group_instance_id) for m in request.members]
    else:
        leaving = [LeavingMember(request.member_id)]
    if not is_coordinator(ctx, request.group_id):
        return respond(types.LeaveGroupResponse, ErrorCode.not_coordinator, members=())
    namespace = namespace_of(ctx.state)
    consumer_group = namespace.consumer_group(request.group_id)
    if consumer_group is not None:
        result = LeaveResult(
            ErrorCode.none, namespace.classic_members.leave(consumer_group, leaving)
        )
    else:
        result = coordinator_of(ctx.state).leave_group(request.group_id, leaving)
    error = result.error
    if not batched and error == ErrorCode.none and result.member_errors:
        # Before v3 the only member's outcome is the response's error.
        error = result.member_errors[0][1]
    members = Encoded()
    pacer = Pacer()  # one answer per member named, the loop given back between them
    for member, member_error in result.member_errors if batched else ():
        members.add(
            respond(
                types.MemberResponse,
                member_error,
                member_id=member.member_id,
                group_instance_id=member.group_instance_id,
            )
        )
        await pacer.breathe()
    return respond(types.LeaveGroupResponse, error, members=members.items())
