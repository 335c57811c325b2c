"""ListGroups, DescribeGroups and DeleteGroups for admin clients.

Each broker answers only for the groups it coordinates; admin clients ask every
broker for ListGroups and merge, exactly as against a real cluster.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.handlers.groups import coordinator_of, is_coordinator, namespace_of
from kafkatest.emulator.server.operations_field import OPERATIONS_OMITTED, unrestricted_operations
from kafkatest.emulator.server.pacing import Pacer
from kafkatest.emulator.server.repeats import Answers, Encoded
from kafkatest.emulator.server.responses import make, make_from, respond, response_types
from kafkatest.emulator.state.acls import ResourceType
from kafkatest.emulator.state.groups.classic.model import GroupDescription, GroupState

#: DescribeGroups reports a group's authorized operations from v3.
_OPERATIONS_SINCE = 3
#: ListGroups v5 "group type"s (and the consumer protocol type of a consumer group).
_CLASSIC = "classic"
_CONSUMER = "consumer"
#: DescribeGroups v6 reports unknown groups as an error instead of a Dead group.
_NOT_FOUND_ERROR_SINCE = 6


@handles(16, 0, 5)
async def list_groups(ctx: RequestContext, request: Any) -> Any:
    """Both group types; ListGroups v5 names each one's type and filters by it."""
    types = response_types(ctx)
    types_filter = {t.lower() for t in getattr(request, "types_filter", ())}
    states = getattr(request, "states_filter", None)
    namespace = namespace_of(ctx.state)
    listed: list[tuple[str, str, str, str]] = []
    if not types_filter or _CLASSIC in types_filter:
        listed += [
            (g.group_id, g.protocol_type, g.state.value, _CLASSIC)
            for g in coordinator_of(ctx.state).list_groups(states)
            if not namespace.is_consumer_group(g.group_id)
        ]
    if not types_filter or _CONSUMER in types_filter:
        wanted = {s.lower() for s in states} if states else None
        listed += [
            (group_id, _CONSUMER, state, group_type)
            for group_id, group_type, state in namespace.listings(wanted)
        ]
    groups = tuple(
        make(
            types.ListedGroup,
            group_id=group_id,
            protocol_type=protocol_type,
            group_state=state,
            group_type=group_type,
        )
        for group_id, protocol_type, state, group_type in listed
        if is_coordinator(ctx, group_id)
    )
    return respond(types.ListGroupsResponse, groups=groups)


@handles(15, 0, 6)
async def describe_groups(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    operations = unrestricted_operations(
        ResourceType.GROUP,
        ctx.api_version >= _OPERATIONS_SINCE
        and getattr(request, "include_authorized_operations", False),
    )
    # Each group named is answered; one named many times is described once.
    answers: Answers[str] = Answers()
    groups = await answers.each(
        request.groups, str, lambda group_id: _describe(ctx, types, group_id, operations)
    )
    return respond(types.DescribeGroupsResponse, groups=groups)


def _describe(ctx: RequestContext, types: Any, group_id: str, operations: int) -> Any:
    """One group; Kafka reports the operations only of a group it answers without
    an error (an unknown one included, until v6 calls it GROUP_ID_NOT_FOUND)."""
    message: str | None = f"Group {group_id} not found."
    if not is_coordinator(ctx, group_id):
        described = GroupDescription(ErrorCode.not_coordinator, group_id, GroupState.DEAD, "", "")
    elif namespace_of(ctx.state).is_consumer_group(group_id):
        # Kafka describes only classic groups here; admin clients use ConsumerGroupDescribe.
        described = GroupDescription(ErrorCode.none, group_id, GroupState.DEAD, "", "")
        message = f"Group {group_id} is not a classic group."
    else:
        described = coordinator_of(ctx.state).describe_group(group_id)
    error = described.error
    unknown = described.state == GroupState.DEAD and error == ErrorCode.none
    if not unknown or ctx.api_version < _NOT_FOUND_ERROR_SINCE:
        message = None
    elif unknown:
        error = ErrorCode.group_id_not_found
    members = tuple(
        make_from(
            types.DescribedGroupMember,
            m,
            member_metadata=m.metadata,
            member_assignment=m.assignment,
        )
        for m in described.members
    )
    return respond(
        types.DescribedGroup,
        error,
        message,
        group_id=group_id,
        group_state=described.state.value
        if error in (ErrorCode.none, ErrorCode.group_id_not_found)
        else "",
        protocol_type=described.protocol_type,
        protocol_data=described.protocol_name,
        members=members,
        authorized_operations=operations if error == ErrorCode.none else OPERATIONS_OMITTED,
    )


@handles(42, 0, 2)
async def delete_groups(ctx: RequestContext, request: Any) -> Any:
    """Each group named is deleted, and answered, once: Kafka drops repeated names
    before deleting (a second deletion of one group would find it gone)."""
    types = response_types(ctx)
    names = tuple(dict.fromkeys(request.groups_names))
    coordinated = [g for g in names if is_coordinator(ctx, g)]
    namespace = namespace_of(ctx.state)
    consumer = [g for g in coordinated if namespace.is_consumer_group(g)]
    outcomes = coordinator_of(ctx.state).delete_groups(
        [g for g in coordinated if g not in consumer]
    )
    outcomes.update((g, namespace.delete(g)) for g in consumer)
    pacer = Pacer()
    results = Encoded()
    for group_id in names:
        error = outcomes.get(group_id, ErrorCode.not_coordinator)
        results.add(respond(types.DeletableGroupResult, error, group_id=group_id))
        await pacer.breathe()
    return respond(types.DeleteGroupsResponse, results=results.items())
