"""DescribeLogDirs: the one log directory each emulated broker keeps (kafka-log-dirs).

Each broker answers for the partitions it holds (a single replica: the ones it
leads) with their size in bytes, as Kafka sums its segment files; a replica is
never behind (offset lag 0) nor a future replica. The directory is in memory: its
name is the broker's ``log.dirs`` setting and its volume sizes are unknown (-1).
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.responses import NO_THROTTLE, make, response_types
from kafkatest.emulator.state.broker_configs import LOG_DIR

#: Kafka's "volume size not known" (DescribeLogDirsResponse.UNKNOWN_VOLUME_BYTES).
UNKNOWN_VOLUME_BYTES = -1


@handles(35, 1, 4)
async def describe_log_dirs(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    wanted: dict[str, set[int]] | None = None
    if request.topics is not None:
        wanted = {}
        for t in request.topics:
            wanted.setdefault(t.topic, set()).update(t.partitions)
    topics = []
    for topic in sorted(ctx.state.topics, key=lambda t: t.name):
        if wanted is not None and topic.name not in wanted:
            continue
        partitions = tuple(
            make(
                types.DescribeLogDirsPartition,
                partition_index=p.index,
                partition_size=p.log.size_bytes,
                offset_lag=0,
                is_future_key=False,
            )
            for p in topic.partitions
            if p.leader_id == ctx.broker_id and (wanted is None or p.index in wanted[topic.name])
        )
        if partitions:
            topics.append(make(types.DescribeLogDirsTopic, name=topic.name, partitions=partitions))
    result = make(
        types.DescribeLogDirsResult,
        error_code=ErrorCode.none,
        log_dir=LOG_DIR,
        topics=tuple(topics),
        total_bytes=UNKNOWN_VOLUME_BYTES,
        usable_bytes=UNKNOWN_VOLUME_BYTES,
    )
    return make(
        types.DescribeLogDirsResponse,
        throttle_time=NO_THROTTLE,
        error_code=ErrorCode.none,
        results=(result,),
    )
