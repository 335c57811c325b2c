"""Share groups (KIP-932) and streams groups (KIP-1071), switched off.

Kafka 4.2 turns both on for a new cluster; the `kafka` backend formats its storage with
`share.version` and `streams.version` at 0 (`kafkatest.brokers.kafka_properties.
FEATURES_OFF`), since the emulator serves neither. Kafka then still advertises and
answers every one of their APIs: the group and fetch APIs with UNSUPPORTED_VERSION, the
share-state APIs (sent to the share coordinator) with NOT_COORDINATOR, since no share
coordinator runs. A client that probes for these groups sees the same answers here.
Each shape below is what the emulated Kafka sent (captured on the `kafka` backend;
`tests/emulator/test_share_groups_off_wire.py` holds them to it).
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.handlers.consumer_groups import refused_group
from kafkatest.emulator.server.repeats import Answers, answer_topics
from kafkatest.emulator.server.responses import NO_THROTTLE, make, respond, response_types

OFF = ErrorCode.unsupported_version
#: What Kafka puts in error_message where it writes one for a switched-off API.
OFF_MESSAGE = "The version of API is not supported."


#: APIs answered whole: api key -> (response class, its fields besides the error).
_WHOLE_ANSWERS: dict[int, tuple[str, dict[str, Any]]] = {
    76: (
        "ShareGroupHeartbeatResponse",
        {
            "error_message": None,
            "member_id": None,
            "member_epoch": 0,
            "heartbeat_interval": NO_THROTTLE,
            "assignment": None,
        },
    ),
    78: (
        "ShareFetchResponse",
        {
            "error_message": None,
            "acquisition_lock_timeout": NO_THROTTLE,
            "responses": (),
            "node_endpoints": (),
        },
    ),
    79: (
        "ShareAcknowledgeResponse",
        {
            "error_message": None,
            "acquisition_lock_timeout": NO_THROTTLE,
            "responses": (),
            "node_endpoints": (),
        },
    ),
    91: ("AlterShareGroupOffsetsResponse", {"error_message": OFF_MESSAGE, "responses": ()}),
    92: ("DeleteShareGroupOffsetsResponse", {"error_message": OFF_MESSAGE, "responses": ()}),
    88: (
        "StreamsGroupHeartbeatResponse",
        {
            "error_message": None,
            "member_id": "",
            "member_epoch": 0,
            "heartbeat_interval": NO_THROTTLE,
            "acceptable_recovery_lag": 0,
            "task_offset_interval": NO_THROTTLE,
            "status": (),
            "active_tasks": None,
            "standby_tasks": None,
            "warmup_tasks": None,
            "endpoint_information_epoch": 0,
            "partitions_by_user_endpoint": None,
        },
    ),
}


@handles(76, 1, 1)
@handles(88, 0, 0)
@handles(78, 1, 2)
@handles(79, 1, 2)
@handles(91, 0, 0)
@handles(92, 0, 0)
async def switched_off(ctx: RequestContext, request: Any) -> Any:
    response_name, fields = _WHOLE_ANSWERS[ctx.api_key]
    return respond(getattr(response_types(ctx), response_name), OFF, **fields)


@handles(77, 1, 1)
@handles(89, 0, 0)
async def group_describe(ctx: RequestContext, request: Any) -> Any:
    """ShareGroupDescribe and StreamsGroupDescribe: each group named, refused."""
    types = response_types(ctx)
    answers: Answers[str] = Answers()
    groups = await answers.each(
        request.group_ids, str, lambda group_id: refused_group(types, group_id, OFF)
    )
    response = "ShareGroupDescribeResponse" if ctx.api_key == 77 else "StreamsGroupDescribeResponse"
    return respond(getattr(types, response), groups=groups)


@handles(90, 0, 1)
async def describe_share_group_offsets(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    answers: Answers[str] = Answers()
    groups = await answers.each(
        request.groups,
        lambda group: group.group_id,
        lambda group: respond(
            types.DescribeShareGroupOffsetsResponseGroup, OFF, group_id=group.group_id, topics=()
        ),
    )
    return respond(types.DescribeShareGroupOffsetsResponse, groups=groups)


# -- the share coordinator's state APIs: every partition NOT_COORDINATOR ----------

#: api key -> (response class, topic result class, what Kafka says it was unable to do,
#: the partition result's extra fields and their zero values).
_STATE_APIS: dict[int, tuple[str, str, str, dict[str, Any]]] = {
    83: (
        "InitializeShareGroupStateResponse",
        "InitializeStateResult",
        "initialize share group state",
        {},
    ),
    84: (
        "ReadShareGroupStateResponse",
        "ReadStateResult",
        "read share group state",
        {"state_epoch": 0, "start_offset": 0, "state_batches": ()},
    ),
    85: ("WriteShareGroupStateResponse", "WriteStateResult", "write share group state", {}),
    86: ("DeleteShareGroupStateResponse", "DeleteStateResult", "delete share group state", {}),
    87: (
        "ReadShareGroupStateSummaryResponse",
        "ReadStateSummaryResult",
        "read share group state summary",
        {"state_epoch": 0, "leader_epoch": 0, "start_offset": 0, "delivery_complete_count": -1},
    ),
}


@handles(83, 0, 0)
@handles(84, 0, 0)
@handles(85, 0, 1)
@handles(86, 0, 0)
@handles(87, 0, 1)
async def share_group_state(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    response_name, result_name, action, extra = _STATE_APIS[ctx.api_key]
    message = f"Unable to {action}: This is not the correct coordinator."
    results = await answer_topics(
        request.topics,
        lambda topic: topic.topic_id,
        lambda topic: topic.partitions,
        lambda partition: partition.partition,
        lambda _, partition: respond(
            types.PartitionResult,
            ErrorCode.not_coordinator,
            message,
            partition=partition.partition,
            **extra,
        ),
        lambda topic_id, partitions: make(
            getattr(types, result_name), topic_id=topic_id, partitions=partitions
        ),
    )
    return make(getattr(types, response_name), results=results)
