"""FindCoordinator: the broker coordinating a group (key type 0) or a transactional
id (key type 1). Both coordinators live in the one shared state; the answer only
spreads keys over the emulated brokers as Kafka spreads coordinator partitions.
From v4 one request asks for many keys and gets an answer per key. The first
group lookup creates ``__consumer_offsets`` and, as on Kafka, answers
COORDINATOR_NOT_AVAILABLE (clients retry); a group's coordinator is then the
leader of its offsets partition.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.handlers.groups import coordinator_of
from kafkatest.emulator.server.repeats import Answers
from kafkatest.emulator.server.responses import make, respond, response_types
from kafkatest.emulator.state.internal_topics import ensure_offsets_topic, group_coordinator

#: FindCoordinator v4 batches keys: one request, a coordinator per key.
_BATCHED_SINCE = 4
_GROUP_KEY = 0


@handles(10, 0, 6)
async def find_coordinator(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    key_type = getattr(request, "key_type", _GROUP_KEY)
    if ctx.api_version < _BATCHED_SINCE:
        return respond(types.FindCoordinatorResponse, **_coordinator(ctx, key_type, request.key))
    # Each key named is answered; one named many times is looked up once.
    answers: Answers[str] = Answers()
    coordinators = await answers.each(
        request.coordinator_keys,
        str,
        lambda key: make(types.Coordinator, key=key, **_coordinator(ctx, key_type, key)),
    )
    return respond(types.FindCoordinatorResponse, coordinators=coordinators)


def _coordinator(ctx: RequestContext, key_type: int, key: str) -> dict[str, Any]:
    """One key's answer: node, host, port, error code and message."""
    state = ctx.state
    cluster = state.cluster
    unavailable = {
        "error_code": ErrorCode.coordinator_not_available,
        "error_message": "The coordinator is not available.",
        "node_id": -1,
        "host": "",
        "port": -1,
    }
    if key_type == _GROUP_KEY:
        coordinator_of(state).coordinator_looked_up(key)
        if not ensure_offsets_topic(state):
            return unavailable
        node_id = group_coordinator(state, key)
    else:
        node_id = cluster.coordinator_for(key)
    if node_id not in cluster.live_broker_ids:
        return unavailable  # its offsets partition has no leader (every replica down)
    host, port = cluster.address(node_id, ctx.listener)
    # Kafka's Errors.NONE.message() is its name.
    return {
        "error_code": ErrorCode.none,
        "error_message": "NONE",
        "node_id": node_id,
        "host": host,
        "port": port,
    }
