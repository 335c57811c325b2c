"""The KRaft controller's own APIs: DescribeQuorum (kafka-metadata-quorum), the
voter changes of KIP-853 (AddRaftVoter, RemoveRaftVoter) and UnregisterBroker.

An emulated cluster has one controller (its controller broker), the only voter
and the quorum's leader at epoch 1, never lagging. Its high watermark grows as a
Kafka controller's does when idle: by one NoOpRecord per
``metadata.max.idle.interval.ms`` (500 ms) since the emulator started.

The voter is configured statically, as kafkatest's `kafka` backend configures
its controller, so voters can change only after ``kraft.version`` is raised to 1
(kafka-features); then the voter shows its directory id. No other process can
join the emulator's quorum: adding a voter fails as Kafka's does when the new
voter does not answer, and the only voter cannot be removed (Kafka keeps at
least one). Every answer below was captured from the `kafka` backend.
"""

from __future__ import annotations

import base64
import uuid
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.repeats import answer_topics
from kafkatest.emulator.server.responses import make, respond, response_types
from kafkatest.emulator.state.features import KRAFT_VERSION

METADATA_TOPIC = "__cluster_metadata"
LEADER_EPOCH = 1
NOOP_INTERVAL_MS = 500
#: DescribeQuorum lists the controllers' endpoints (`nodes`) from v2.
_NODES_SINCE = 2


@handles(55, 0, 2)
async def describe_quorum(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    state = ctx.state
    cluster = state.cluster
    controller = cluster.controller_id
    now = state.clock.now_ms()
    high_watermark = 1 + (now - state.started_ms) // NOOP_INTERVAL_MS
    voter = make(
        types.ReplicaState,
        replica_id=controller,
        replica_directory_id=_voter_directory_id(ctx),
        log_end_offset=high_watermark,
        last_fetch_timestamp=now,
        last_caught_up_timestamp=now,
    )

    def partition(topic_name: str, p: Any) -> Any:
        if topic_name != METADATA_TOPIC or p.partition_index != 0:
            return respond(
                types.PartitionData,
                ErrorCode.unknown_topic_or_partition,
                partition_index=p.partition_index,
                leader_id=-1,
                leader_epoch=-1,
                high_watermark=-1,
                current_voters=(),
                observers=(),
            )
        return respond(
            types.PartitionData,
            ErrorCode.none,
            "",
            partition_index=0,
            leader_id=controller,
            leader_epoch=LEADER_EPOCH,
            high_watermark=high_watermark,
            current_voters=(voter,),
            observers=(),
        )

    topics = await answer_topics(
        request.topics,
        lambda t: t.topic_name,
        lambda t: t.partitions,
        lambda p: p.partition_index,
        partition,
        lambda name, partitions: make(types.TopicData, topic_name=name, partitions=partitions),
    )
    nodes: tuple[Any, ...] = ()
    # The endpoints of the voters it described: none if the quorum's partition was not asked.
    described = any(p.current_voters for t in topics for p in t.partitions)
    if ctx.api_version >= _NODES_SINCE and described:
        host, port = cluster.address(controller)
        nodes = (
            make(
                types.Node,
                node_id=controller,
                listeners=(make(types.Listener, name="CONTROLLER", host=host, port=port),),
            ),
        )
    return respond(types.DescribeQuorumResponse, ErrorCode.none, "", topics=topics, nodes=nodes)


def _voter_directory_id(ctx: RequestContext) -> uuid.UUID:
    """A statically configured voter shows no directory id (all zeros) until
    kraft.version 1 records it."""
    if ctx.state.features.kraft_reconfiguration:
        return ctx.state.cluster.controller_directory_id
    return uuid.UUID(int=0)


def replica_key(voter_id: int, directory_id: uuid.UUID | None) -> str:
    """Kafka's ReplicaKey.toString, which its voter errors quote."""
    if directory_id is None or directory_id.int == 0:
        shown = "<undefined>"
    else:
        shown = base64.urlsafe_b64encode(directory_id.bytes).decode().rstrip("=")
    return f"ReplicaKey(id={voter_id}, directoryId={shown})"


def _voter_change_refusal(ctx: RequestContext, request: Any, verb: str) -> tuple[ErrorCode, str]:
    """The checks adding and removing share, in Kafka's order; (NONE, "") if none."""
    cluster_id = ctx.state.cluster.cluster_id
    if request.cluster_id is not None and request.cluster_id != cluster_id:
        return (
            ErrorCode.inconsistent_cluster_id,
            f'The given id "{request.cluster_id}" doesn\'t match the cluster id "{cluster_id}"',
        )
    if request.voter_directory_id in (None, uuid.UUID(int=0)):
        # A voter is named by its id and its directory id; without one it is no voter.
        request_name = "Add" if verb == "adding" else "Remove"
        return (
            ErrorCode.invalid_request,
            f"{request_name} voter request didn't include a valid voter",
        )
    if not ctx.state.features.kraft_reconfiguration:
        return (
            ErrorCode.unsupported_version,
            f"Cluster doesn't support {verb} voter because the kraft.version feature is "
            f"{ctx.state.features.level(KRAFT_VERSION)}",
        )
    return ErrorCode.none, ""


def _voters(ctx: RequestContext) -> str:
    return f"[{replica_key(ctx.state.cluster.controller_id, _voter_directory_id(ctx))}]"


@handles(80, 0, 1)
async def add_raft_voter(ctx: RequestContext, request: Any) -> Any:
    error, message = _voter_change_refusal(ctx, request, "adding")
    if error == ErrorCode.none:
        new_voter = replica_key(request.voter_id, request.voter_directory_id)
        if request.voter_id == ctx.state.cluster.controller_id:
            error = ErrorCode.duplicate_voter
            message = f"The voter id for {new_voter} is already part of the set of voters " + (
                f"{_voters(ctx)}."
            )
        else:
            error = ErrorCode.request_timed_out
            message = (
                "Aborted add voter operation for since API_VERSIONS returned an error "
                "BROKER_NOT_AVAILABLE"
            )
    return _answer(ctx, "AddRaftVoterResponse", error, message)


@handles(81, 0, 0)
async def remove_raft_voter(ctx: RequestContext, request: Any) -> Any:
    error, message = _voter_change_refusal(ctx, request, "removing")
    if error == ErrorCode.none:
        voter = replica_key(request.voter_id, request.voter_directory_id)
        error = ErrorCode.voter_not_found
        message = f"Cannot remove voter {voter} from the set of voters {_voters(ctx)}"
    return _answer(ctx, "RemoveRaftVoterResponse", error, message)


@handles(64, 0, 0)
async def unregister_broker(ctx: RequestContext, request: Any) -> Any:
    """kafka-cluster unregister: acknowledged for a known broker id. The emulated
    broker stays registered (docs/explanation/differences.md)."""
    if request.broker_id in ctx.state.cluster.broker_ids:
        error, message = ErrorCode.none, ""
    else:
        error = ErrorCode.broker_id_not_registered
        message = f"Broker ID {request.broker_id} is not currently registered"
    return _answer(ctx, "UnregisterBrokerResponse", error, message)


def _answer(ctx: RequestContext, response: str, error: ErrorCode, message: str) -> Any:
    """The controller APIs' one shape: an error code and its message."""
    return respond(getattr(response_types(ctx), response), error, message)
