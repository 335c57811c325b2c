"""FindCoordinator and InitProducerId.

The emulator has no transaction coordinator. Rather than hand out a transactional
producer id whose commit could never complete (a client would wait out its whole
timeout), transactional requests get the error Kafka gives a client that may not use
its transactional id: fatal and immediate in every client, with a message saying why.
"""

from __future__ import annotations

import logging
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.responses import NO_THROTTLE, error_code_of, make, response_types
from kafkatest.emulator.state.errors import StateError

log = logging.getLogger("kafkatest.emulator")
_GROUP_KEY, _TRANSACTION_KEY = 0, 1
NO_TRANSACTIONS = "the kafkatest emulator does not support transactions (use the kafka backend)"


@handles(10, 0, 3)
async def find_coordinator(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    if getattr(request, "key_type", _GROUP_KEY) == _TRANSACTION_KEY:
        log.info("%s: refused a transaction coordinator lookup: %s", ctx.peer, NO_TRANSACTIONS)
        return make(
            types.FindCoordinatorResponse,
            throttle_time=NO_THROTTLE,
            error_code=ErrorCode.transactional_id_authorization_failed,
            error_message=NO_TRANSACTIONS,
            node_id=-1,
            host="",
            port=-1,
        )
    cluster = ctx.state.cluster
    node_id = cluster.coordinator_for(request.key)
    host, port = cluster.address(node_id)
    return make(
        types.FindCoordinatorResponse,
        throttle_time=NO_THROTTLE,
        error_code=ErrorCode.none,
        error_message=None,
        node_id=node_id,
        host=host,
        port=port,
    )


@handles(22, 0, 5)
async def init_producer_id(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    if request.transactional_id is not None:
        log.info("%s: refused a transactional InitProducerId: %s", ctx.peer, NO_TRANSACTIONS)
        return make(
            types.InitProducerIdResponse,
            throttle_time=NO_THROTTLE,
            error_code=ErrorCode.transactional_id_authorization_failed,
            producer_id=-1,
            producer_epoch=-1,
        )
    try:
        producer_id, epoch = ctx.state.producers.init_producer(
            getattr(request, "producer_id", -1), getattr(request, "producer_epoch", -1)
        )
    except StateError as exc:
        return make(
            types.InitProducerIdResponse,
            throttle_time=NO_THROTTLE,
            error_code=error_code_of(exc),
            producer_id=-1,
            producer_epoch=-1,
        )
    return make(
        types.InitProducerIdResponse,
        throttle_time=NO_THROTTLE,
        error_code=ErrorCode.none,
        producer_id=producer_id,
        producer_epoch=epoch,
    )
