"""Produce: validate and append one batch per partition, acks 0/1/all.

A single replica means acks=all is satisfied as soon as the leader appends.
As Kafka 4.1, ApiVersions advertises Produce from v0 (old librdkafka detects
compression support by it) but v0-2 (message formats before v2) are not served.
From v13 topics are named by id; an unknown id is UNKNOWN_TOPIC_ID.
"""

from __future__ import annotations

import logging
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.protocol.batches import BatchError, split_batches
from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.pacing import Pacer
from kafkatest.emulator.server.repeats import Encoded
from kafkatest.emulator.server.responses import (
    datetime_from_ms,
    error_code_of,
    make,
    respond,
    response_types,
)
from kafkatest.emulator.state import replicas
from kafkatest.emulator.state.broker_state import TransactionalProduce
from kafkatest.emulator.state.errors import (
    CorruptMessage,
    InvalidRecord,
    RecordsRejected,
    StateError,
)

log = logging.getLogger("kafkatest.emulator")

_VALID_ACKS = (-1, 0, 1)


#: Only Kafka's own admin client id may append to an internal topic.
_ADMIN_CLIENT_ID = "__admin_client"
#: The first Produce version that names topics by id.
TOPIC_ID_VERSION = 13


@handles(0, 3, 13, advertised_min=0)
async def produce(ctx: RequestContext, request: Any) -> Any:
    state = ctx.state
    state.maybe_enforce_retention()
    types = response_types(ctx)
    by_id = ctx.api_version >= TOPIC_ID_VERSION
    responses = Encoded()
    pacer = Pacer()  # each partition's batch is appended, the loop given back between
    for topic_data in request.topic_data:
        if by_id:
            found = state.topics.find_by_id(topic_data.topic_id)
            name = None if found is None else found.name
        else:
            name = topic_data.name
        partitions = Encoded()
        for data in topic_data.partition_data:
            partitions.add(_produce_partition(ctx, types, name, data, request))
            await pacer.breathe()
        responses.add(
            make(
                types.TopicProduceResponse,
                name=name,
                topic_id=getattr(topic_data, "topic_id", None),
                partition_responses=partitions.items(),
            )
        )
    if request.acks == 0:
        return None
    return respond(types.ProduceResponse, responses=responses.items(), node_endpoints=())


def _produce_partition(
    ctx: RequestContext, types: Any, topic_name: str | None, data: Any, request: Any
) -> Any:
    def failed(
        code: ErrorCode,
        message: str | None = None,
        log_start_offset: int = -1,
        record_errors: tuple[Any, ...] = (),
    ) -> Any:
        return respond(
            types.PartitionProduceResponse,
            code,
            message,
            index=data.index,
            base_offset=-1,
            log_append_time=None,
            log_start_offset=log_start_offset,
            record_errors=record_errors,
        )

    if request.acks not in _VALID_ACKS:
        return failed(ErrorCode.invalid_required_acks)
    if topic_name is None:
        return failed(ErrorCode.unknown_topic_id)
    try:
        topic = ctx.state.topics.get(topic_name)
        if topic.is_internal and ctx.client_id != _ADMIN_CLIENT_ID:
            return failed(
                ErrorCode.invalid_topic_exception, f"Cannot append to internal topic {topic_name}"
            )
        partition = topic.partition(data.index)
        if partition.leader_id != ctx.broker_id:
            return failed(ErrorCode.not_leader_or_follower)
        if request.acks == -1:
            replicas.check_enough_in_sync(topic, partition)
        header, batch = _single_batch(data.records)
        transaction = None
        if header.is_transactional:
            if request.transactional_id is None:
                return failed(
                    ErrorCode.transactional_id_authorization_failed,
                    "transactional records need the Produce request's transactional id",
                )
            transaction = TransactionalProduce(
                request.transactional_id,
                add_partition=ctx.api_version >= 12,
                abortable_supported=ctx.api_version >= 11,
            )
        result = ctx.state.append(topic, data.index, header, batch, transaction)
    except RecordsRejected as exc:
        log.info("produce to %s-%s refused: %s", topic_name, data.index, exc)
        entry = getattr(types, "BatchIndexAndErrorMessage", None)  # Produce v8+
        errors = tuple(
            make(entry, batch_index=index, batch_index_error_message=message)
            for index, message in exc.record_errors
            if entry is not None
        )
        return failed(error_code_of(exc), str(exc), exc.log_start_offset, errors)
    except StateError as exc:
        log.info("produce to %s-%s refused: %s", topic_name, data.index, exc)
        return failed(error_code_of(exc), str(exc))
    return respond(
        types.PartitionProduceResponse,
        index=data.index,
        base_offset=result.base_offset,
        log_append_time=datetime_from_ms(result.log_append_time),
        log_start_offset=result.log_start_offset,
        record_errors=(),
    )


def _single_batch(records: bytes | None) -> Any:
    """Produce v3+ carries exactly one v2 batch per partition, as Kafka insists."""
    if not records:
        raise InvalidRecord("produce request carries no record batch")
    try:
        batches = split_batches(records)
    except BatchError as exc:
        raise (CorruptMessage if exc.kind == "corrupt" else InvalidRecord)(str(exc)) from exc
    if len(batches) != 1:
        raise InvalidRecord(
            f"Produce requests must contain exactly one record batch, found {len(batches)}"
        )
    return batches[0]
