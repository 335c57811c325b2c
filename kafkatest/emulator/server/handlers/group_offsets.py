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

from kafkatest.emulator.protocol.replies import EncodedItems
from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.handlers.groups import coordinator_of, is_coordinator, namespace_of
from kafkatest.emulator.server.pacing import Pacer
from kafkatest.emulator.server.repeats import Answers, answer_topics
from kafkatest.emulator.server.responses import make, respond, response_types
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


class _Ref(NamedTuple):
    """A requested topic as the answer names it: by name, or (v10) by id with the name
    it resolved to (None: the id names no topic)."""

    name: str | None
    topic_id: uuid.UUID | None


def _topic_id(ctx: RequestContext, name: str) -> uuid.UUID | None:
    topic = ctx.state.topics.find(name)
    return None if topic is None else topic.topic_id


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
            if not ctx.state.topics.has_partition(name, p.partition_index):
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
    topics = await _partition_errors(
        types.OffsetCommitResponseTopic,
        types.OffsetCommitResponsePartition,
        request.topics,
        errors,
        names,
    )
    return respond(types.OffsetCommitResponse, topics=topics)


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


async def _partition_errors(
    topic_type: type,
    partition_type: type,
    topics: Sequence[Any],
    errors: Mapping[TopicPartition, ErrorCode],
    names: Sequence[str | None] | None = None,
) -> EncodedItems:
    """One error per requested partition, in the request's layout (commit and delete);
    `names` are the topics' names where the request names them by id (None: unknown).
    A partition named again reuses its first answer (`answer_topics`)."""
    resolved = dict(
        zip(
            (id(t) for t in topics),
            [t.name for t in topics] if names is None else names,
            strict=True,
        )
    )

    def error_of(ref: _Ref, p: Any) -> ErrorCode:
        if ref.name is None:
            return ErrorCode.unknown_topic_id
        return errors[(ref.name, p.partition_index)]

    return await answer_topics(
        topics,
        lambda t: _Ref(resolved[id(t)], getattr(t, "topic_id", None)),
        lambda t: t.partitions,
        lambda p: p.partition_index,
        lambda ref, p: respond(partition_type, error_of(ref, p), partition_index=p.partition_index),
        lambda ref, partitions: make(
            topic_type, name=ref.name, topic_id=ref.topic_id, partitions=partitions
        ),
    )


#: OffsetFetch v8 batches groups: one request, a result per group.
_BATCHED_FETCH_SINCE = 8


@handles(9, 1, 10)
async def offset_fetch(ctx: RequestContext, request: Any) -> Any:
    """Committed offsets, answered as Kafka 4.1's coordinator answers: in the request's
    layout, each naming of a partition (or of a group, from v8) answered alike.

    Each distinct group's offsets are looked up once per request, each distinct
    group naming answered (and encoded) once, and the loop is given back between
    namings (`repeats.Answers`, `Pacer`).
    """
    types = response_types(ctx)
    stable = getattr(request, "require_stable", False)
    pacer = Pacer()
    if ctx.api_version < _BATCHED_FETCH_SINCE:
        error, fetched, unstable = _fetch_group(ctx, request.group_id, request.topics, stable)
        topics = await _fetched_topics(
            types.OffsetFetchResponseTopic,
            types.OffsetFetchResponsePartition,
            # A group's refusal comes alone; NOT_COORDINATOR is in every partition.
            request.topics if error is ErrorCode.none or fetched else (),
            fetched,
            error,
            unstable,
            pacer,
        )
        return respond(types.OffsetFetchResponse, error, topics=topics)

    by_id = ctx.api_version >= _TOPIC_IDS_SINCE

    async def answer_group(group: Any) -> Any:
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
        topics = await _fetched_topics(
            types.OffsetFetchResponseTopics,
            types.OffsetFetchResponsePartitions,
            () if error is not ErrorCode.none else wanted,
            {} if error is not ErrorCode.none else fetched,
            ErrorCode.none,
            unstable,
            pacer,
            (lambda name: _topic_id(ctx, name)) if by_id else None,
        )
        if error is ErrorCode.none and unknown:  # then the ids naming no topic, as Kafka lists them
            topics = topics + tuple(
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
        return respond(
            types.OffsetFetchResponseGroup, error, group_id=group.group_id, topics=topics
        )

    answers: Answers[Any] = Answers(pacer)
    groups = await answers.each(
        request.groups,
        lambda g: (g.group_id, g.topics, getattr(g, "member_id", None)),
        answer_group,
    )
    return respond(types.OffsetFetchResponse, groups=groups)


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


async def _fetched_topics(
    topic_type: type,
    partition_type: type,
    asked: Iterable[Any] | None,
    fetched: Mapping[TopicPartition, CommittedOffset | None],
    error: ErrorCode,
    unstable: set[TopicPartition],
    pacer: Pacer,
    topic_id: Callable[[str], uuid.UUID | None] | None = None,
) -> EncodedItems:
    """The answer's topics: as `asked` names them (each naming answered), or every
    fetched partition by topic when the request asked for all (`asked` None); named by
    name, or by id (v10+) with `topic_id`."""

    def partition(topic: str, index: int) -> Any:
        if (topic, index) in unstable:
            return _fetched_partition(partition_type, index, None, ErrorCode.unstable_offset_commit)
        return _fetched_partition(partition_type, index, fetched.get((topic, index)), error)

    if asked is None:
        by_topic: dict[str, list[int]] = {}
        for topic, index in fetched:
            by_topic.setdefault(topic, []).append(index)
        layout = list(by_topic.items())
    else:
        layout = [(t.name, t.partition_indexes) for t in asked]
    return await answer_topics(
        layout,
        lambda entry: entry[0],
        lambda entry: entry[1],
        int,
        partition,
        lambda name, partitions: make(
            topic_type,
            name=name,
            topic_id=None if topic_id is None else topic_id(name),
            partitions=partitions,
        ),
        pacer,
    )


def _fetched_partition(
    partition_type: type, partition: int, committed: CommittedOffset | None, error: ErrorCode
) -> Any:
    return respond(
        partition_type,
        error,
        partition_index=partition,
        committed_offset=committed.offset if committed else NO_OFFSET,
        committed_leader_epoch=committed.leader_epoch if committed else NO_LEADER_EPOCH,
        metadata=(committed.metadata or "") if committed else "",
    )


@handles(47, 0, 0)
async def offset_delete(ctx: RequestContext, request: Any) -> Any:
    """kafka-consumer-groups --delete-offsets; refused for topics an active group reads."""
    types = response_types(ctx)
    outcomes: dict[TopicPartition, ErrorCode] = {}
    if not request.group_id:
        error = ErrorCode.invalid_group_id  # checked before the coordinator, as Kafka does
    elif not is_coordinator(ctx, request.group_id):
        error = ErrorCode.not_coordinator
    else:
        pacer = Pacer()
        known = []
        for topic in request.topics:
            for p in topic.partitions:
                tp = (topic.name, p.partition_index)
                outcomes[tp] = ErrorCode.unknown_topic_or_partition
                if ctx.state.topics.has_partition(*tp):
                    known.append(tp)
                await pacer.breathe()
        subscribed = namespace_of(ctx.state).subscribed_topics(request.group_id) or frozenset()
        for topic, partition in known:
            if topic in subscribed:
                outcomes[(topic, partition)] = ErrorCode.group_subscribed_to_topic
        deletable = [tp for tp in known if tp[0] not in subscribed]
        error, deleted = coordinator_of(ctx.state).delete_offsets(request.group_id, deletable)
        outcomes.update(deleted)
    # A group-level error comes alone, without partitions (as Kafka answers).
    topics = await _partition_errors(
        types.OffsetDeleteResponseTopic,
        types.OffsetDeleteResponsePartition,
        request.topics if error is ErrorCode.none else (),
        outcomes,
    )
    return respond(types.OffsetDeleteResponse, error, topics=topics)
