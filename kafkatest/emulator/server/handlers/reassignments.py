"""ElectLeaders, AlterPartitionReassignments and ListPartitionReassignments.

Every emulated partition has one replica, its leader, which is also its
preferred leader: an election is never needed (ELECTION_NOT_NEEDED, and an
all-partitions election names none, as Kafka's controller leaves those out). A
reassignment to another single broker moves the partition's leader at once (an
election: the leader epoch moves on), so no reassignment is ever in progress and
the list is always empty. More than one replica cannot be kept, and brokers that
do not exist are refused as Kafka refuses them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.responses import NO_THROTTLE, error_code_of, make, response_types
from kafkatest.emulator.state import EmulatorState
from kafkatest.emulator.state.errors import StateError
from kafkatest.emulator.state.topics import Topic, check_replica_assignments

_NOT_NEEDED = "Leader election not needed for topic partition."


def _partition_error(
    state: EmulatorState, name: str, index: int, reassigning: bool = False
) -> tuple[ErrorCode, str] | None:
    """Kafka's controller's words for a partition it does not have (its election and
    reassignment code say it differently)."""
    topic = state.topics.find(name)
    if topic is None:
        message = (
            f"Unable to find a topic named {name}." if reassigning else f"No such topic as {name}"
        )
        return ErrorCode.unknown_topic_or_partition, message
    if not 0 <= index < len(topic.partitions):
        message = (
            f"Unable to find partition {name}:{index}."
            if reassigning
            else f"No such partition as {name}-{index}"
        )
        return ErrorCode.unknown_topic_or_partition, message
    return None


@handles(43, 0, 2)
async def elect_leaders(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    results = []
    if request.topic_partitions is not None:
        for wanted in request.topic_partitions:
            partitions = []
            for index in wanted.partitions:
                code, message = _partition_error(ctx.state, wanted.topic, index) or (
                    ErrorCode.election_not_needed,
                    _NOT_NEEDED,
                )
                partitions.append(
                    make(
                        types.PartitionResult,
                        partition_id=index,
                        error_code=code,
                        error_message=message,
                    )
                )
            results.append(
                make(
                    types.ReplicaElectionResult,
                    topic=wanted.topic,
                    partition_result=tuple(partitions),
                )
            )
    return make(
        types.ElectLeadersResponse,
        throttle_time=NO_THROTTLE,
        error_code=ErrorCode.none,
        replica_election_results=tuple(results),
    )


@handles(45, 0, 1)
async def alter_partition_reassignments(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    responses = []
    for wanted in request.topics:
        partitions = []
        for p in wanted.partitions:
            code, message = _reassign(ctx.state, wanted.name, p.partition_index, p.replicas)
            partitions.append(
                make(
                    types.ReassignablePartitionResponse,
                    partition_index=p.partition_index,
                    error_code=code,
                    error_message=message,
                )
            )
        responses.append(
            make(types.ReassignableTopicResponse, name=wanted.name, partitions=tuple(partitions))
        )
    return make(
        types.AlterPartitionReassignmentsResponse,
        throttle_time=NO_THROTTLE,
        allow_replication_factor_change=getattr(request, "allow_replication_factor_change", True),
        error_code=ErrorCode.none,
        error_message=None,
        responses=tuple(responses),
    )


def _reassign(
    state: EmulatorState, name: str, index: int, replicas: Sequence[int] | None
) -> tuple[ErrorCode, str | None]:
    missing = _partition_error(state, name, index, reassigning=True)
    if missing is not None:
        return missing
    if replicas is None:
        return ErrorCode.no_reassignment_in_progress, None
    try:
        [leader] = check_replica_assignments(state.cluster.broker_ids, [list(replicas)])
    except StateError as exc:
        return error_code_of(exc), str(exc)
    topic: Topic = state.topics.get(name)
    if topic.partitions[index].leader_id != leader:
        state.move_leader(name, index, leader)
        state.appends.notify()
    return ErrorCode.none, None


@handles(46, 0, 0)
async def list_partition_reassignments(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    return make(
        types.ListPartitionReassignmentsResponse,
        throttle_time=NO_THROTTLE,
        error_code=ErrorCode.none,
        error_message=None,
        topics=(),
    )
