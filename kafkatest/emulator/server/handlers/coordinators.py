"""FindCoordinator (groups and transactional ids) and InitProducerId."""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.responses import NO_THROTTLE, error_code_of, make, response_types
from kafkatest.emulator.state.errors import StateError


@handles(10, 0, 3)
async def find_coordinator(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
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
