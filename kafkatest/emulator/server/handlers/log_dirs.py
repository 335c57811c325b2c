"""The one log directory each emulated broker keeps: DescribeLogDirs (kafka-log-dirs)
and AlterReplicaLogDirs (kafka-reassign-partitions' log-dir moves).

Each broker answers for the partitions it holds (a single replica: the ones it
leads) with their size in bytes, as Kafka sums its segment files; a replica is
never behind (offset lag 0) nor a future replica. The directory is in memory: its
name is the broker's ``log.dirs`` setting and its volume sizes are unknown (-1).
Moving a replica to the directory it is in succeeds and moves nothing, as on a
one-directory Kafka broker; any other directory is not found.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.pacing import Pacer
from kafkatest.emulator.server.repeats import each_partition
from kafkatest.emulator.server.responses import make, respond, response_types
from kafkatest.emulator.state.broker_configs import LOG_DIR

#: Kafka's "volume size not known" (DescribeLogDirsResponse.UNKNOWN_VOLUME_BYTES).
UNKNOWN_VOLUME_BYTES = -1


@handles(35, 1, 5)
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
    result = respond(
        types.DescribeLogDirsResult,
        log_dir=LOG_DIR,
        topics=tuple(topics),
        total_bytes=UNKNOWN_VOLUME_BYTES,
        usable_bytes=UNKNOWN_VOLUME_BYTES,
        is_cordoned=False,
    )
    return respond(types.DescribeLogDirsResponse, results=(result,))


#: Kafka names a moving replica's directory "<topic>-<partition>.<32 hex>-future" and
#: refuses a move whose name would pass the file system's 255 bytes (KAFKA-4893).
_FUTURE_DIR_SUFFIX = len(".") + 32 + len("-future")
_MAX_DIR_NAME = 255


@handles(34, 1, 2)
async def alter_replica_log_dirs(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    errors: dict[str, dict[int, ErrorCode]] = defaultdict(dict)
    pacer = Pacer()
    for wanted in request.dirs:
        for topic in wanted.topics:
            for index in topic.partitions:
                errors[topic.name][index] = _move_error(ctx, wanted.path, topic.name, index)
                await pacer.breathe()
    results = await each_partition(
        errors.items(),
        lambda entry: entry[1].items(),
        lambda _, result: respond(
            types.AlterReplicaLogDirPartitionResult, result[1], partition_index=result[0]
        ),
        lambda entry, partitions: make(
            types.AlterReplicaLogDirTopicResult, topic_name=entry[0], partitions=partitions
        ),
        pacer,
    )
    return respond(types.AlterReplicaLogDirsResponse, results=results)


def _move_error(ctx: RequestContext, path: str, topic_name: str, index: int) -> ErrorCode:
    """Kafka's ReplicaManager.alterReplicaLogDirs checks, in its order."""
    if len(f"{topic_name}-{index}") + _FUTURE_DIR_SUFFIX > _MAX_DIR_NAME:
        return ErrorCode.invalid_topic_exception
    if path != LOG_DIR:
        return ErrorCode.log_dir_not_found
    topic = ctx.state.topics.find(topic_name)
    if topic is None or not 0 <= index < len(topic.partitions):
        return ErrorCode.unknown_topic_or_partition
    if ctx.broker_id not in topic.partitions[index].replicas:
        return ErrorCode.not_leader_or_follower
    return ErrorCode.none
