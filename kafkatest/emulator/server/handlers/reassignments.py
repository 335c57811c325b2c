"""ElectLeaders, AlterPartitionReassignments and ListPartitionReassignments.

The rules live in `state.replicas`. An emulated replica is caught up the moment it
exists, so a reassignment completes at once and the in-progress list is always
empty; a preferred election is needed only after a leader moved off the first
replica (ELECTION_NOT_NEEDED otherwise; an all-partitions election names only the
partitions it moved, as Kafka's controller leaves the others out). Brokers that do
not exist are refused as Kafka refuses them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.pacing import Pacer
from kafkatest.emulator.server.repeats import Encoded, each_partition
from kafkatest.emulator.server.responses import error_code_of, make, respond, response_types
from kafkatest.emulator.state import EmulatorState, replicas
from kafkatest.emulator.state.errors import StateError
from kafkatest.emulator.state.topics import Topic, check_replica_assignments


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
    state = ctx.state
    unclean = getattr(request, "election_type", 0) == 1
    named = request.topic_partitions is not None
    wanted: list[tuple[str, list[int]]] = (
        [(w.topic, list(w.partitions)) for w in request.topic_partitions]
        if request.topic_partitions is not None
        else [(t.name, [p.index for p in t.partitions]) for t in state.topics]
    )
    results = Encoded()
    pacer = Pacer()  # a mutation per partition: each is done, the loop given back between
    for topic, indexes in wanted:
        partitions = Encoded()
        for index in indexes:
            await pacer.breathe()
            code, message = _partition_error(state, topic, index) or _elect(
                state, topic, index, unclean
            )
            if not named and code == ErrorCode.election_not_needed:
                continue  # an all-partitions election leaves out what needed none
            partitions.add(respond(types.PartitionResult, code, message, partition_id=index))
        # Every topic has its entry, empty when none of its partitions needed one.
        results.add(
            make(types.ReplicaElectionResult, topic=topic, partition_result=partitions.items())
        )
    return respond(types.ElectLeadersResponse, replica_election_results=results.items())


def _elect(
    state: EmulatorState, topic: str, index: int, unclean: bool
) -> tuple[ErrorCode, str | None]:
    try:
        replicas.elect(topic, state.topics.get(topic).partitions[index], unclean)
    except StateError as exc:
        return error_code_of(exc), str(exc)
    state.appends.notify()
    return ErrorCode.none, None


@handles(45, 0, 1)
async def alter_partition_reassignments(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)

    def answer(wanted: Any, p: Any) -> Any:
        code, message = _reassign(ctx.state, wanted.name, p.partition_index, p.replicas)
        return respond(
            types.ReassignablePartitionResponse, code, message, partition_index=p.partition_index
        )

    responses = await each_partition(
        request.topics,
        lambda wanted: wanted.partitions,
        answer,
        lambda wanted, partitions: make(
            types.ReassignableTopicResponse, name=wanted.name, partitions=partitions
        ),
        Pacer(),
    )
    return respond(
        types.AlterPartitionReassignmentsResponse,
        ErrorCode.none,
        "",
        allow_replication_factor_change=getattr(request, "allow_replication_factor_change", True),
        responses=responses,
    )


def _reassign(
    state: EmulatorState, name: str, index: int, new_replicas: Sequence[int] | None
) -> tuple[ErrorCode, str | None]:
    missing = _partition_error(state, name, index, reassigning=True)
    if missing is not None:
        return missing
    if new_replicas is None:
        return ErrorCode.no_reassignment_in_progress, None
    try:
        check_replica_assignments(state.cluster.broker_ids, [list(new_replicas)])
    except StateError as exc:
        return error_code_of(exc), str(exc)
    topic: Topic = state.topics.get(name)
    replicas.reassign(state.cluster, topic.partitions[index], list(new_replicas))
    state.appends.notify()
    return ErrorCode.none, None


@handles(46, 0, 0)
async def list_partition_reassignments(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    return respond(types.ListPartitionReassignmentsResponse, topics=())
