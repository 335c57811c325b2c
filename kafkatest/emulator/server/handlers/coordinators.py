"""FindCoordinator: the broker coordinating a group (key type 0) or a transactional
id (key type 1). Both coordinators live in the one shared state; the answer only
spreads keys over the emulated brokers as Kafka spreads coordinator partitions.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.responses import NO_THROTTLE, make, response_types


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
