"""OffsetCommit, OffsetFetch and OffsetDelete: committed positions of consumer groups.

Partitions of unknown topics are refused here (as Kafka's request layer does)
before the coordinator judges the committer; a null commit metadata is stored as
"" because that is what Kafka hands back on fetch. From v10 (KIP-848) OffsetCommit
and OffsetFetch name topics by id: an id naming no topic is UNKNOWN_TOPIC_ID for
each of its partitions, and a fetch of all offsets leaves out topics that have no id
any more (a deleted topic's offsets), as Kafka cannot write them either.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.handlers.groups import coordinator_of, is_coordinator, namespace_of
from kafkatest.emulator.server.responses import NO_THROTTLE, make, response_types
from kafkatest.emulator.state import EmulatorState
from kafkatest.emulator.state.groups.offsets import CommittedOffset

TopicPartition = tuple[str, int]
NO_OFFSET = -1
#: OffsetCommit v9 answers a commit for a group that does not exist with GROUP_ID_NOT_FOUND.
_GROUP_NOT_FOUND_SINCE = 9
NO_LEADER_EPOCH = -1
#: OffsetCommit and OffsetFetch v10 name topics by id instead of by name.
_TOPIC_IDS_SINCE = 10


def _topic_names(ctx: RequestContext, topics: Iterable[Any]) -> list[str | None]:
    """Each requested topic's name: by id from v10 (None where the id names no topic)."""
    if ctx.api_version < _TOPIC_IDS_SINCE:
        return [t.name for t in topics]
    found = (ctx.state.topics.find_by_id(t.topic_id) for t in topics)
    return [None if topic is None else topic.name for topic in found]


class _NamedTopic(NamedTuple):
    """An OffsetFetch v10 topic whose id was resolved to its name."""

    name: str
    partition_indexes: tuple[int, ...]


def _topic_id(ctx: RequestContext, name: str) -> uuid.UUID | None:
    topic = ctx.state.topics.find(name)
    return None if topic is None else topic.topic_id


def _partition_exists(state: EmulatorState, topic: str, partition: int) -> bool:
    found = state.topics.find(topic)
    return found is not None and 0 <= partition < len(found.partitions)


@handles(8, 2, 10)
async def offset_commit(ctx: RequestContext, request: Any) -> Any:
    names = _topic_names(ctx, request.topics)
    requested = [
        (name, p)
        for name, t in zip(names, request.topics, strict=True)
        if name is not None
        for p in t.partitions
    ]
    errors: dict[TopicPartition, ErrorCode] = {}
    if not is_coordinator(ctx, request.group_id):
        errors = {(name, p.partition_index): ErrorCode.not_coordinator for name, p in requested}
    else:
        valid: dict[TopicPartition, CommittedOffset] = {}
        for name, p in requested:
            key = (name, p.partition_index)
            if not _partition_exists(ctx.state, name, p.partition_index):
                errors[key] = ErrorCode.unknown_topic_or_partition
                continue
            valid[key] = CommittedOffset(
                offset=p.committed_offset,
                leader_epoch=getattr(p, "committed_leader_epoch", NO_LEADER_EPOCH),
                metadata=p.committed_metadata or "",
                commit_timestamp_ms=-1,
            )
        errors.update(_commit(ctx, request, valid))
    types = response_types(ctx)
    topics = _partition_errors(
        types.OffsetCommitResponseTopic,
        types.OffsetCommitResponsePartition,
        request.topics,
        errors,
        names,
    )
    return make(types.OffsetCommitResponse, throttle_time=NO_THROTTLE, topics=topics)


def _commit(
    ctx: RequestContext, request: Any, valid: Mapping[TopicPartition, CommittedOffset]
) -> dict[TopicPartition, ErrorCode]:
    """A consumer group judges the member epoch itself (each partition's, for an older
    epoch), then stores like a simple commit."""
    namespace = namespace_of(ctx.state)
    generation = request.generation_id_or_member_epoch
    member_id, instance_id = request.member_id, getattr(request, "group_instance_id", None)
    refused: dict[TopicPartition, ErrorCode] = {}
    if namespace.is_consumer_group(request.group_id):
        check = namespace.commit_error(request.group_id, member_id, generation, ctx.api_version)
        if check.error is not None:
            return dict.fromkeys(valid, check.error)
        for name, partition in valid:
            error = check.partition_error(_topic_id(ctx, name), partition)
            if error is not None:
                refused[(name, partition)] = error
        valid = {key: offset for key, offset in valid.items() if key not in refused}
        generation, member_id, instance_id = -1, "", None
    elif (
        generation >= 0
        and ctx.api_version >= _GROUP_NOT_FOUND_SINCE
        and not namespace.exists(request.group_id)
    ):
        # OffsetCommit v9+ names a missing group instead of ILLEGAL_GENERATION.
        return dict.fromkeys(valid, ErrorCode.group_id_not_found)
    if not valid:
        return refused
    return refused | coordinator_of(ctx.state).commit_offsets(
        request.group_id,
        valid,
        generation_id=generation,
        member_id=member_id,
        group_instance_id=instance_id,
    )


def _partition_errors(
    topic_type: type,
    partition_type: type,
    topics: Sequence[Any],
    errors: Mapping[TopicPartition, ErrorCode],
    names: Sequence[str | None] | None = None,
) -> tuple[Any, ...]:
    """One error per requested partition, in the request's layout (commit and delete);
    `names` are the topics' names where the request names them by id (None: unknown)."""
    return tuple(
        make(
            topic_type,
            name=getattr(topic, "name", None),
            topic_id=getattr(topic, "topic_id", None),
            partitions=tuple(
                make(
                    partition_type,
                    partition_index=p.partition_index,
                    error_code=ErrorCode.unknown_topic_id
                    if name is None
                    else errors[(name, p.partition_index)],
                )
                for p in topic.partitions
            ),
        )
        for topic, name in zip(
            topics, [t.name for t in topics] if names is None else names, strict=True
        )
    )


#: OffsetFetch v8 batches groups: one request, a result per group.
_BATCHED_FETCH_SINCE = 8


@handles(9, 1, 10)
async def offset_fetch(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    stable = getattr(request, "require_stable", False)
    if ctx.api_version < _BATCHED_FETCH_SINCE:
        error, fetched, unstable = _fetch_group(ctx, request.group_id, request.topics, stable)
        return make(
            types.OffsetFetchResponse,
            throttle_time=NO_THROTTLE,
            error_code=error,
            topics=_fetched_topics(
                types.OffsetFetchResponseTopic,
                types.OffsetFetchResponsePartition,
                fetched,
                error,
                unstable,
            ),
        )
    groups = []
    by_id = ctx.api_version >= _TOPIC_IDS_SINCE
    for group in request.groups:
        member = (getattr(group, "member_id", None), getattr(group, "member_epoch", -1))
        wanted = group.topics
        unknown: tuple[Any, ...] = ()
        if by_id and wanted is not None:
            names = _topic_names(ctx, wanted)
            unknown = tuple(t for t, name in zip(wanted, names, strict=True) if name is None)
            wanted = [
                _NamedTopic(name, t.partition_indexes)
                for t, name in zip(wanted, names, strict=True)
                if name is not None
            ]
        error, fetched, unstable = _fetch_group(ctx, group.group_id, wanted, stable, member)
        if by_id:  # a topic without an id (deleted since) cannot be written
            fetched = {tp: c for tp, c in fetched.items() if _topic_id(ctx, tp[0]) is not None}
        # From v8 a group-level error comes alone, without partitions.
        topics = _fetched_topics(
            types.OffsetFetchResponseTopics,
            types.OffsetFetchResponsePartitions,
            {} if error is not ErrorCode.none else fetched,
            ErrorCode.none,
            unstable,
            (lambda name: _topic_id(ctx, name)) if by_id else None,
        )
        if error is ErrorCode.none:  # then the ids naming no topic, as Kafka lists them
            topics += tuple(
                make(
                    types.OffsetFetchResponseTopics,
                    topic_id=t.topic_id,
                    partitions=tuple(
                        _fetched_partition(
                            types.OffsetFetchResponsePartitions, p, None, ErrorCode.unknown_topic_id
                        )
                        for p in t.partition_indexes
                    ),
                )
                for t in unknown
            )
        groups.append(
            make(
                types.OffsetFetchResponseGroup,
                group_id=group.group_id,
                topics=topics,
                error_code=error,
            )
        )
    return make(types.OffsetFetchResponse, throttle_time=NO_THROTTLE, groups=tuple(groups))


def _fetch_group(
    ctx: RequestContext,
    group_id: str,
    topics: Iterable[Any] | None,
    require_stable: bool,
    member: tuple[str | None, int] = (None, -1),
) -> tuple[ErrorCode, dict[TopicPartition, CommittedOffset | None], set[TopicPartition]]:
    """(group error, committed offsets, partitions whose offsets are not stable yet).

    `member` is OffsetFetch v9's (member id, member epoch), which a consumer group checks.
    """
    wanted = None if topics is None else [(t.name, p) for t in topics for p in t.partition_indexes]
    if not is_coordinator(ctx, group_id):
        # Before v2 there is no top-level error: each partition carries it.
        return ErrorCode.not_coordinator, dict.fromkeys(wanted or []), set()
    refusal = namespace_of(ctx.state).fetch_error(group_id, *member)
    if refusal is not None:
        return refusal, {}, set()
    fetched = coordinator_of(ctx.state).fetch_offsets(group_id, wanted)
    unstable: set[TopicPartition] = set()
    if require_stable:
        # KIP-447: offsets a transaction has not committed yet are not stable.
        unstable = ctx.state.transactions.pending_offsets(group_id)
    return ErrorCode.none, fetched, unstable


def _fetched_topics(
    topic_type: type,
    partition_type: type,
    fetched: Mapping[TopicPartition, CommittedOffset | None],
    error: ErrorCode,
    unstable: set[TopicPartition],
    topic_id: Callable[[str], uuid.UUID | None] | None = None,
) -> tuple[Any, ...]:
    """The fetched offsets by topic, named by name, or by id (v10+) with `topic_id`."""
    by_topic: dict[str, list[tuple[int, CommittedOffset | None]]] = {}
    for (topic, partition), committed in fetched.items():
        by_topic.setdefault(topic, []).append((partition, committed))
    return tuple(
        make(
            topic_type,
            name=topic,
            topic_id=None if topic_id is None else topic_id(topic),
            partitions=tuple(
                _fetched_partition(partition_type, partition, committed, error)
                if (topic, partition) not in unstable
                else _fetched_partition(
                    partition_type, partition, None, ErrorCode.unstable_offset_commit
                )
                for partition, committed in partitions
            ),
        )
        for topic, partitions in by_topic.items()
    )


def _fetched_partition(
    partition_type: type, partition: int, committed: CommittedOffset | None, error: ErrorCode
) -> Any:
    return make(
        partition_type,
        partition_index=partition,
        committed_offset=committed.offset if committed else NO_OFFSET,
        committed_leader_epoch=committed.leader_epoch if committed else NO_LEADER_EPOCH,
        metadata=(committed.metadata or "") if committed else "",
        error_code=error,
    )


@handles(47, 0, 0)
async def offset_delete(ctx: RequestContext, request: Any) -> Any:
    """kafka-consumer-groups --delete-offsets; refused for topics an active group reads."""
    types = response_types(ctx)
    wanted = [(t.name, p.partition_index) for t in request.topics for p in t.partitions]
    known = [tp for tp in wanted if _partition_exists(ctx.state, *tp)]
    outcomes: dict[TopicPartition, ErrorCode] = dict.fromkeys(
        wanted, ErrorCode.unknown_topic_or_partition
    )
    if not request.group_id:
        error = ErrorCode.invalid_group_id  # checked before the coordinator, as Kafka does
    elif not is_coordinator(ctx, request.group_id):
        error = ErrorCode.not_coordinator
    else:
        subscribed = namespace_of(ctx.state).subscribed_topics(request.group_id) or frozenset()
        for topic, partition in known:
            if topic in subscribed:
                outcomes[(topic, partition)] = ErrorCode.group_subscribed_to_topic
        deletable = [tp for tp in known if tp[0] not in subscribed]
        error, deleted = coordinator_of(ctx.state).delete_offsets(request.group_id, deletable)
        outcomes.update(deleted)
    # A group-level error comes alone, without partitions (as Kafka answers).
    topics = _partition_errors(
        types.OffsetDeleteResponseTopic,
        types.OffsetDeleteResponsePartition,
        request.topics if error is ErrorCode.none else (),
        outcomes,
    )
    return make(
        types.OffsetDeleteResponse, error_code=error, throttle_time=NO_THROTTLE, topics=topics
    )
