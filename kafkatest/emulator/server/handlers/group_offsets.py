"""OffsetCommit, OffsetFetch and OffsetDelete: committed positions of consumer groups.

Partitions of unknown topics are refused here (as Kafka's request layer does)
before the coordinator judges the committer; a null commit metadata is stored as
"" because that is what Kafka hands back on fetch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.protocol.replies import EncodedItems
from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.handlers.groups import coordinator_of, is_coordinator, namespace_of
from kafkatest.emulator.server.pacing import Pacer
from kafkatest.emulator.server.repeats import Answers, answer_topics
from kafkatest.emulator.server.responses import NO_THROTTLE, make, response_types
from kafkatest.emulator.state import EmulatorState
from kafkatest.emulator.state.groups.offsets import CommittedOffset

TopicPartition = tuple[str, int]
NO_OFFSET = -1
#: OffsetCommit v9 answers a commit for a group that does not exist with GROUP_ID_NOT_FOUND.
_GROUP_NOT_FOUND_SINCE = 9
NO_LEADER_EPOCH = -1


def _partition_exists(state: EmulatorState, topic: str, partition: int) -> bool:
    found = state.topics.find(topic)
    return found is not None and 0 <= partition < len(found.partitions)


@handles(8, 2, 9)
async def offset_commit(ctx: RequestContext, request: Any) -> Any:
    requested = [(t.name, p) for t in request.topics for p in t.partitions]
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
    topics = await _partition_errors(
        types.OffsetCommitResponseTopic, types.OffsetCommitResponsePartition, request.topics, errors
    )
    return make(types.OffsetCommitResponse, throttle_time=NO_THROTTLE, topics=topics)


def _commit(
    ctx: RequestContext, request: Any, valid: Mapping[TopicPartition, CommittedOffset]
) -> dict[TopicPartition, ErrorCode]:
    """A consumer group judges the member epoch itself, then stores like a simple commit."""
    namespace = namespace_of(ctx.state)
    generation = request.generation_id_or_member_epoch
    member_id, instance_id = request.member_id, getattr(request, "group_instance_id", None)
    if namespace.is_consumer_group(request.group_id):
        refusal = namespace.commit_error(request.group_id, member_id, generation, ctx.api_version)
        if refusal is not None:
            return dict.fromkeys(valid, refusal)
        generation, member_id, instance_id = -1, "", None
    elif (
        generation >= 0
        and ctx.api_version >= _GROUP_NOT_FOUND_SINCE
        and not namespace.exists(request.group_id)
    ):
        # OffsetCommit v9+ names a missing group instead of ILLEGAL_GENERATION.
        return dict.fromkeys(valid, ErrorCode.group_id_not_found)
    if not valid:
        return {}
    return coordinator_of(ctx.state).commit_offsets(
        request.group_id,
        valid,
        generation_id=generation,
        member_id=member_id,
        group_instance_id=instance_id,
    )


async def _partition_errors(
    topic_type: type,
    partition_type: type,
    topics: Iterable[Any],
    errors: Mapping[TopicPartition, ErrorCode],
) -> EncodedItems:
    """One error per requested partition, in the request's layout (commit and delete);
    a partition named again reuses its first answer (`answer_topics`)."""
    return await answer_topics(
        topics,
        lambda t: t.name,
        lambda t: t.partitions,
        lambda p: p.partition_index,
        lambda name, p: make(
            partition_type,
            partition_index=p.partition_index,
            error_code=errors[(name, p.partition_index)],
        ),
        lambda name, partitions: make(topic_type, name=name, partitions=partitions),
    )


#: OffsetFetch v8 batches groups: one request, a result per group.
_BATCHED_FETCH_SINCE = 8


@handles(9, 1, 9)
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
        return make(
            types.OffsetFetchResponse, throttle_time=NO_THROTTLE, error_code=error, topics=topics
        )

    async def answer_group(group: Any) -> Any:
        member = (getattr(group, "member_id", None), getattr(group, "member_epoch", -1))
        error, fetched, unstable = _fetch_group(ctx, group.group_id, group.topics, stable, member)
        # From v8 a group-level error comes alone, without partitions.
        topics = await _fetched_topics(
            types.OffsetFetchResponseTopics,
            types.OffsetFetchResponsePartitions,
            () if error is not ErrorCode.none else group.topics,
            {} if error is not ErrorCode.none else fetched,
            ErrorCode.none,
            unstable,
            pacer,
        )
        return make(
            types.OffsetFetchResponseGroup, group_id=group.group_id, topics=topics, error_code=error
        )

    answers: Answers[Any] = Answers(pacer)
    groups = await answers.each(
        request.groups,
        lambda g: (g.group_id, g.topics, getattr(g, "member_id", None)),
        answer_group,
    )
    return make(types.OffsetFetchResponse, throttle_time=NO_THROTTLE, groups=groups)


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
) -> EncodedItems:
    """The answer's topics: as `asked` names them (each naming answered), or every
    fetched partition by topic when the request asked for all (`asked` None)."""

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
        lambda name, partitions: make(topic_type, name=name, partitions=partitions),
        pacer,
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
                if _partition_exists(ctx.state, *tp):
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
    return make(
        types.OffsetDeleteResponse, error_code=error, throttle_time=NO_THROTTLE, topics=topics
    )
