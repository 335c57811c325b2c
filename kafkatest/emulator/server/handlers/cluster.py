"""DescribeCluster: the Java Admin client's preferred way to list brokers."""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.operations_field import OPERATIONS_OMITTED, unrestricted_operations
from kafkatest.emulator.server.responses import make_from, respond, response_types
from kafkatest.emulator.state.acls import ResourceType

_BROKER_ENDPOINTS = 1


@handles(60, 0, 2)
async def describe_cluster(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    cluster = ctx.state.cluster
    if getattr(request, "endpoint_type", _BROKER_ENDPOINTS) != _BROKER_ENDPOINTS:
        return respond(
            types.DescribeClusterResponse,
            ErrorCode.unsupported_endpoint_type,
            "only broker endpoints are served",
            endpoint_type=request.endpoint_type,
            cluster_id=cluster.cluster_id,
            controller_id=-1,
            brokers=(),
            cluster_authorized_operations=OPERATIONS_OMITTED,
        )
    return respond(
        types.DescribeClusterResponse,
        endpoint_type=_BROKER_ENDPOINTS,
        cluster_id=cluster.cluster_id,
        controller_id=cluster.controller_id,
        brokers=tuple(
            make_from(
                types.DescribeClusterBroker, n, broker_id=n.node_id, rack=None, is_fenced=False
            )
            for n in cluster.listener_nodes(ctx.listener)
        ),
        cluster_authorized_operations=unrestricted_operations(
            ResourceType.CLUSTER, request.include_cluster_authorized_operations
        ),
    )
