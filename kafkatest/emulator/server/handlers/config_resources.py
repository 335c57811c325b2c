"""ListConfigResources (KIP-1142): what `kafka-configs --describe` without a name
lists first: every topic (internal ones too), every broker and its logger, the
client metrics subscriptions and the groups with configs set. v0 (once
ListClientMetricsResources) asks for client metrics subscriptions only. A type
outside those is answered UNSUPPORTED_VERSION with nothing listed, as Kafka.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.responses import make, respond, response_types

#: ConfigResource types ListConfigResources v1 lists, in the order they are listed.
TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
_LISTABLE = (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP)


@handles(74, 0, 1)
async def list_config_resources(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    wanted = (CLIENT_METRICS,) if ctx.api_version == 0 else tuple(request.resource_types)
    if any(kind not in _LISTABLE for kind in wanted):
        return respond(
            types.ListConfigResourcesResponse, ErrorCode.unsupported_version, config_resources=()
        )
    state = ctx.state
    brokers = [str(broker_id) for broker_id in state.cluster.broker_ids]
    names: dict[int, list[str]] = {
        TOPIC: sorted(topic.name for topic in state.topics),
        BROKER: brokers,
        BROKER_LOGGER: brokers,
        CLIENT_METRICS: state.client_metrics.names(),
        GROUP: state.group_configs.names(),
    }
    listed = tuple(
        make(types.ConfigResource, resource_name=name, resource_type=kind)
        for kind in _LISTABLE
        if not wanted or kind in wanted
        for name in names[kind]
    )
    return respond(types.ListConfigResourcesResponse, config_resources=listed)
