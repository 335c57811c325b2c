"""DescribeQuorum: the KRaft metadata quorum, as kafka-metadata-quorum shows it.

An emulated cluster has one controller (its controller broker), the only voter
and the quorum's leader at epoch 1, never lagging. Its high watermark grows as a
Kafka controller's does when idle: by one NoOpRecord per
``metadata.max.idle.interval.ms`` (500 ms) since the emulator started.
"""

from __future__ import annotations

import uuid
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.responses import make, response_types

METADATA_TOPIC = "__cluster_metadata"
LEADER_EPOCH = 1
NOOP_INTERVAL_MS = 500


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
        # A statically configured voter has no directory id (all zeros).
        replica_directory_id=uuid.UUID(int=0),
        log_end_offset=high_watermark,
        last_fetch_timestamp=now,
        last_caught_up_timestamp=now,
    )
    topics = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            if topic.topic_name != METADATA_TOPIC or p.partition_index != 0:
                partitions.append(
                    make(
                        types.PartitionData,
                        partition_index=p.partition_index,
                        error_code=ErrorCode.unknown_topic_or_partition,
                        error_message=None,
                        leader_id=-1,
                        leader_epoch=-1,
                        high_watermark=-1,
                        current_voters=(),
                        observers=(),
                    )
                )
                continue
            partitions.append(
                make(
                    types.PartitionData,
                    partition_index=0,
                    error_code=ErrorCode.none,
                    error_message=None,
                    leader_id=controller,
                    leader_epoch=LEADER_EPOCH,
                    high_watermark=high_watermark,
                    current_voters=(voter,),
                    observers=(),
                )
            )
        topics.append(
            make(types.TopicData, topic_name=topic.topic_name, partitions=tuple(partitions))
        )
    host, port = cluster.address(controller)
    nodes = (
        make(
            types.Node,
            node_id=controller,
            listeners=(make(types.Listener, name="CONTROLLER", host=host, port=port),),
        ),
    )
    return make(
        types.DescribeQuorumResponse,
        error_code=ErrorCode.none,
        error_message=None,
        topics=tuple(topics),
        nodes=nodes,
    )
