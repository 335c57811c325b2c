"""DescribeClientQuotas and AlterClientQuotas (KIP-546).

What `kafka-configs --entity-type users|clients|ips --describe|--alter` and
Admin.describeClientQuotas / alterClientQuotas send. The checks and matching are
the state's (`state.client_quotas`); here an ip entity's host name is resolved off
the event loop, with a deadline, as Kafka's controller resolves it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.pacing import Pacer, run_paced
from kafkatest.emulator.server.repeats import Encoded
from kafkatest.emulator.server.responses import error_code_of, make, respond, response_types
from kafkatest.emulator.state.client_quotas import (
    IP,
    Alteration,
    ClientQuotaStore,
    Entity,
    FilterComponent,
)
from kafkatest.emulator.state.errors import StateError

#: How long the host names of one request may take to resolve, together.
RESOLVE_DEADLINE_S = 2.0


def _store(ctx: RequestContext) -> ClientQuotaStore:
    store: ClientQuotaStore = ctx.state.client_quotas
    return store


@handles(48, 0, 1)
async def describe_client_quotas(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    components = [
        FilterComponent(c.entity_type, int(c.match_type), c.match) for c in request.components
    ]
    try:
        matched = _store(ctx).describe(components, bool(request.strict))
    except StateError as exc:
        return respond(
            types.DescribeClientQuotasResponse, error_code_of(exc), str(exc), entries=None
        )
    entries = tuple(
        make(
            types.EntryData,
            entity=_entity_data(types, entity),
            values=tuple(
                make(types.ValueData, key=key, value=value) for key, value in sorted(quotas.items())
            ),
        )
        for entity, quotas in matched
    )
    return respond(types.DescribeClientQuotasResponse, ErrorCode.none, "", entries=entries)


@handles(49, 0, 1)
async def alter_client_quotas(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    alterations = [
        Alteration(
            entity=[(e.entity_type, e.entity_name) for e in entry.entity],
            ops=[(op.key, None if op.remove else float(op.value)) for op in entry.ops],
        )
        for entry in request.entries
    ]
    pacer = Pacer()
    hosts = {
        name
        for alteration in alterations
        for kind, name in alteration.entity
        if kind == IP and name
    }
    resolvable = await _resolvable(hosts)
    steps = _store(ctx).alter_steps(
        alterations, bool(request.validate_only), resolvable.__contains__
    )
    results = await run_paced(steps, pacer)
    entries = Encoded()
    for entity, error in results:
        entries.add(
            respond(
                types.EntryData,
                ErrorCode.none if error is None else error_code_of(error),
                None if error is None else str(error),
                entity=_entity_data(types, entity),
            )
        )
        await pacer.breathe()
    return respond(types.AlterClientQuotasResponse, entries=entries.items())


def _entity_data(types: Any, entity: Entity) -> tuple[Any, ...]:
    """An entity on the wire: its (type, name) pairs, by type."""
    return tuple(
        make(types.EntityData, entity_type=kind, entity_name=name)
        for kind, name in sorted(entity, key=lambda pair: pair[0])
    )


async def _resolvable(hosts: set[str]) -> set[str]:
    """The names that are addresses or resolve (InetAddress.getByName), within the deadline."""
    found = set()
    pending = []
    for host in hosts:
        try:
            ipaddress.ip_address(host)
            found.add(host)
        except ValueError:
            pending.append(host)
    if not pending:
        return found
    loop = asyncio.get_running_loop()
    lookups = [loop.getaddrinfo(host, None, type=socket.SOCK_STREAM) for host in pending]
    try:
        answers = await asyncio.wait_for(
            asyncio.gather(*lookups, return_exceptions=True), RESOLVE_DEADLINE_S
        )
    except asyncio.TimeoutError:
        return found
    found.update(
        host
        for host, answer in zip(pending, answers, strict=True)
        if not isinstance(answer, BaseException)
    )
    return found
