"""CreateAcls, DescribeAcls and DeleteAcls, so `kafka-acls` and admin clients manage ACLs.

Without ACLs on (no authorizer) Kafka answers all three with SECURITY_DISABLED;
who may call them (ALTER or DESCRIBE on the cluster) is checked by the
authorization layer before these run.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode
from kio.static.primitive import i8

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.pacing import Pacer
from kafkatest.emulator.server.repeats import Encoded
from kafkatest.emulator.server.responses import make, respond, response_types
from kafkatest.emulator.state.acls import (
    AclBinding,
    AclFilter,
    AclOperation,
    AclPermission,
    InvalidAcl,
    PatternType,
    ResourceType,
)

_NO_AUTHORIZER = "No Authorizer is configured on the broker"


def _enum(kind: type[Any], value: int) -> Any:
    """A wire code as its enum; a code Kafka does not know is its UNKNOWN."""
    try:
        return kind(value)
    except ValueError:
        return kind.UNKNOWN


def _filter(entry: Any) -> AclFilter:
    return AclFilter(
        resource_type=_enum(ResourceType, entry.resource_type_filter),
        resource_name=entry.resource_name_filter,
        pattern_type=_enum(PatternType, entry.pattern_type_filter),
        principal=entry.principal_filter,
        host=entry.host_filter,
        operation=_enum(AclOperation, entry.operation),
        permission=_enum(AclPermission, entry.permission_type),
    )


def _wire(acl: AclBinding) -> dict[str, Any]:
    return {
        "principal": acl.principal,
        "host": acl.host,
        "operation": i8(acl.operation),
        "permission_type": i8(acl.permission),
    }


@handles(29, 1, 3)
async def describe_acls(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    acls = ctx.state.acls
    if acls is None:
        return respond(
            types.DescribeAclsResponse, ErrorCode.security_disabled, _NO_AUTHORIZER, resources=()
        )
    by_resource: dict[tuple[ResourceType, str, PatternType], list[AclBinding]] = {}
    for acl in acls.describe(_filter(request)):
        key = (acl.resource_type, acl.resource_name, acl.pattern_type)
        by_resource.setdefault(key, []).append(acl)
    resources = tuple(
        make(
            types.DescribeAclsResource,
            resource_type=i8(rtype),
            resource_name=name,
            pattern_type=i8(ptype),
            acls=tuple(make(types.AclDescription, **_wire(a)) for a in bindings),
        )
        for (rtype, name, ptype), bindings in by_resource.items()
    )
    return respond(types.DescribeAclsResponse, resources=resources)


@handles(30, 1, 3)
async def create_acls(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    acls = ctx.state.acls
    results = Encoded()
    pacer = Pacer()
    for creation in request.creations:
        await pacer.breathe()
        code, message = ErrorCode.none, None
        if acls is None:
            code, message = ErrorCode.security_disabled, "No Authorizer is configured."
        else:
            try:
                acls.add(
                    AclBinding(
                        resource_type=_enum(ResourceType, creation.resource_type),
                        resource_name=creation.resource_name,
                        pattern_type=_enum(PatternType, creation.resource_pattern_type),
                        principal=creation.principal,
                        host=creation.host,
                        operation=_enum(AclOperation, creation.operation),
                        permission=_enum(AclPermission, creation.permission_type),
                    )
                )
            except InvalidAcl as exc:
                code, message = ErrorCode.invalid_request, str(exc)
        results.add(respond(types.AclCreationResult, code, message))
    return respond(types.CreateAclsResponse, results=results.items())


@handles(31, 1, 3)
async def delete_acls(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    acls = ctx.state.acls
    results = Encoded()
    pacer = Pacer()  # each filter is matched against every ACL: the loop is given back
    for entry in request.filters:
        await pacer.breathe()
        if acls is None:
            results.add(
                respond(
                    types.DeleteAclsFilterResult,
                    ErrorCode.security_disabled,
                    "No Authorizer is configured.",
                    matching_acls=(),
                )
            )
            continue
        deleted = acls.delete(_filter(entry))
        matching = tuple(
            respond(
                types.DeleteAclsMatchingAcl,
                resource_type=i8(acl.resource_type),
                resource_name=acl.resource_name,
                pattern_type=i8(acl.pattern_type),
                **_wire(acl),
            )
            for acl in deleted
        )
        results.add(respond(types.DeleteAclsFilterResult, matching_acls=matching))
    return respond(types.DeleteAclsResponse, filter_results=results.items())
