"""ACL bindings and the authorization decision, as Kafka's StandardAuthorizer makes it.

Kafka 4.1 (KRaft) keeps ACLs in the metadata log and decides with
`StandardAuthorizerData.findAclRule`; this module keeps the same bindings and
answers the same question, `authorize(principal, host, operation, type, name)`:

1. a super user is allowed everything, whatever ACLs say;
2. the ACLs that apply to the name are LITERAL ones with that name, LITERAL ``*``,
   and PREFIXED ones whose name is a prefix of it;
3. among those matching the principal (or ``User:*``), the host (or ``*``) and the
   operation, any DENY wins, else any ALLOW allows;
4. with no matching rule: denied when the resource has ACLs of any kind, else
   ``allow.everyone.if.no.acl.found`` (False by default) decides.

ALLOW of READ, WRITE, DELETE or ALTER implies DESCRIBE, ALLOW of ALTER_CONFIGS implies
DESCRIBE_CONFIGS, and ALL matches every operation; implications never apply to DENY
(a DENY READ does not deny DESCRIBE). The enum values are Kafka's wire codes.
Nothing here knows the wire.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import IntEnum

from kafkatest.emulator.state.errors import StateError

#: The CLUSTER resource has exactly this name.
CLUSTER_NAME = "kafka-cluster"
WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    #: Filters only: every stored pattern type.
    ANY = 1
    #: Filters only: every stored ACL that applies to the filter's (literal) name.
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermission(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


_IMPLIES_DESCRIBE = frozenset(
    {
        AclOperation.DESCRIBE,
        AclOperation.READ,
        AclOperation.WRITE,
        AclOperation.DELETE,
        AclOperation.ALTER,
    }
)
_IMPLIES_DESCRIBE_CONFIGS = frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS})

#: The operations a describe answer reports as authorized, per resource type (Kafka's
#: AclEntry.supportedOperations): a broker without an authorizer reports all of them,
#: one with an authorizer those the principal is allowed.
REPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (
        AclOperation.READ,
        AclOperation.WRITE,
        AclOperation.CREATE,
        AclOperation.DELETE,
        AclOperation.ALTER,
        AclOperation.DESCRIBE,
        AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
    ),
    ResourceType.GROUP: (
        AclOperation.READ,
        AclOperation.DELETE,
        AclOperation.DESCRIBE,
        AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
    ),
    ResourceType.CLUSTER: (
        AclOperation.CREATE,
        AclOperation.CLUSTER_ACTION,
        AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
        AclOperation.IDEMPOTENT_WRITE,
        AclOperation.ALTER,
        AclOperation.DESCRIBE,
    ),
}


class InvalidAcl(StateError):
    """A binding CreateAcls refuses (Kafka's INVALID_REQUEST with this message)."""

    error_name = "invalid_request"


@dataclass(frozen=True, slots=True)
class AclBinding:
    """One stored ACL: who may (or may not) do what to which resources."""

    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission: AclPermission

    def applies_to(self, name: str) -> bool:
        """Whether this binding's resource pattern covers the resource `name`."""
        if self.pattern_type is PatternType.PREFIXED:
            return name.startswith(self.resource_name)
        return self.resource_name == name or self.resource_name == WILDCARD

    def decides(self, principal: str, host: str, operation: AclOperation) -> bool:
        """Whether this binding speaks for (principal, host, operation)."""
        if self.principal != principal and self.principal != WILDCARD_PRINCIPAL:
            return False
        if self.host != WILDCARD and self.host != host:
            return False
        if self.operation is AclOperation.ALL or self.operation is operation:
            return True
        if self.permission is not AclPermission.ALLOW:
            return False
        if operation is AclOperation.DESCRIBE:
            return self.operation in _IMPLIES_DESCRIBE
        if operation is AclOperation.DESCRIBE_CONFIGS:
            return self.operation in _IMPLIES_DESCRIBE_CONFIGS
        return False


@dataclass(frozen=True, slots=True)
class AclFilter:
    """Which bindings DescribeAcls and DeleteAcls mean; None and ANY match anything."""

    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission: AclPermission = AclPermission.ANY

    def matches(self, acl: AclBinding) -> bool:
        """Kafka's AclBindingFilter.matches: exact fields, MATCH by applicability."""
        if self.resource_type is not ResourceType.ANY and self.resource_type != acl.resource_type:
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH) and (
            self.pattern_type != acl.pattern_type
        ):
            return False
        if self.resource_name is not None:
            if self.pattern_type is PatternType.MATCH:
                if not acl.applies_to(self.resource_name):
                    return False
            elif self.resource_name != acl.resource_name:
                return False
        if self.principal is not None and self.principal != acl.principal:
            return False
        if self.host is not None and self.host != acl.host:
            return False
        if self.operation is not AclOperation.ANY and self.operation != acl.operation:
            return False
        return self.permission is AclPermission.ANY or self.permission == acl.permission


def validate_binding(acl: AclBinding) -> None:
    """Refuse what Kafka's CreateAcls refuses, with Kafka's message."""
    if acl.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        raise InvalidAcl(f"Invalid resourceType {acl.resource_type.name}")
    if acl.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        raise InvalidAcl(f"Invalid patternType {acl.pattern_type.name}")
    if acl.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        raise InvalidAcl(f"Invalid operation {acl.operation.name}")
    if acl.permission not in (AclPermission.ALLOW, AclPermission.DENY):
        raise InvalidAcl(f"Invalid permissionType {acl.permission.name}")
    if acl.resource_type is ResourceType.CLUSTER and acl.resource_name != CLUSTER_NAME:
        raise InvalidAcl(f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}")
    if not acl.resource_name:
        raise InvalidAcl("Invalid empty resource name")
    if ":" not in acl.principal:
        raise InvalidAcl(
            f"Could not parse principal from `{acl.principal}` (no colon is present "
            "separating the principal type from the principal name)"
        )


class Authorizer:
    """The ACLs of one cluster and the decisions made from them.

    Exists only while ACLs are on (`EmulatorState.acls` is None otherwise), so a
    broker without ACLs pays nothing per request.
    """

    def __init__(
        self,
        super_users: Iterable[str] = (),
        allow_everyone_if_no_acl_found: bool = False,
    ) -> None:
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found
        #: Bindings per resource type, in creation order (a dict used as an ordered set).
        self._bindings: dict[ResourceType, dict[AclBinding, None]] = {}

    def __iter__(self) -> Iterator[AclBinding]:
        for bindings in self._bindings.values():
            yield from bindings

    def __len__(self) -> int:
        return sum(len(b) for b in self._bindings.values())

    # -- decisions -------------------------------------------------------------------

    def authorize(
        self,
        principal: str,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
    ) -> bool:
        if principal in self.super_users:
            return True
        has_acls = False
        allowed = False
        for acl in self._bindings.get(resource_type, ()):
            if not acl.applies_to(name):
                continue
            has_acls = True
            if acl.decides(principal, host, operation):
                if acl.permission is AclPermission.DENY:
                    return False
                allowed = True
        if allowed:
            return True
        return not has_acls and self.allow_everyone_if_no_acl_found

    def permitted_operations(
        self, principal: str, host: str, resource_type: ResourceType, name: str
    ) -> frozenset[AclOperation]:
        """Which of the type's reported operations the principal may perform on `name`
        (Kafka's `authorizedOperations`: each asked of `authorize`, implications
        included, so an ALLOW of READ reports READ and DESCRIBE)."""
        return frozenset(
            operation
            for operation in REPORTED_OPERATIONS[resource_type]
            if self.authorize(principal, host, operation, resource_type, name)
        )

    def authorize_any(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        """Whether `operation` is allowed on at least one resource of the type.

        Kafka's `Authorizer.authorizeByResourceType` (KIP-679: an idempotent producer
        with WRITE on any topic needs no IDEMPOTENT_WRITE): a made-up name first (so
        super users and wildcard ALLOWs pass), then an ALLOW for exactly this operation
        (or ALL; no implications) not dominated by a DENY: a literal DENY of the same
        name, a PREFIXED DENY of a prefix of it, or a wildcard DENY.
        """
        if self.authorize(principal, host, operation, resource_type, "hardcode"):
            return True
        deny_literal: set[str] = set()
        deny_prefixed: set[str] = set()
        allows: list[AclBinding] = []
        for acl in self._bindings.get(resource_type, ()):
            if acl.host != WILDCARD and acl.host != host:
                continue
            if acl.principal != principal and acl.principal != WILDCARD_PRINCIPAL:
                continue
            if acl.operation is not operation and acl.operation is not AclOperation.ALL:
                continue
            if acl.permission is AclPermission.DENY:
                if acl.pattern_type is PatternType.LITERAL and acl.resource_name == WILDCARD:
                    return False
                target = deny_prefixed if acl.pattern_type is PatternType.PREFIXED else deny_literal
                target.add(acl.resource_name)
            else:
                if acl.pattern_type is PatternType.LITERAL and acl.resource_name == WILDCARD:
                    return True
                allows.append(acl)
        for acl in allows:
            if acl.pattern_type is PatternType.LITERAL and acl.resource_name in deny_literal:
                continue
            name = acl.resource_name
            if not any(name[:n] in deny_prefixed for n in range(1, len(name) + 1)):
                return True
        return False

    # -- CreateAcls, DescribeAcls, DeleteAcls ---------------------------------------

    def add(self, acl: AclBinding) -> None:
        """Store `acl` (validated as CreateAcls does); adding it twice changes nothing."""
        validate_binding(acl)
        self._bindings.setdefault(acl.resource_type, {})[acl] = None

    def describe(self, acl_filter: AclFilter) -> list[AclBinding]:
        return [acl for acl in self if acl_filter.matches(acl)]

    def delete(self, acl_filter: AclFilter) -> list[AclBinding]:
        """Remove and return every binding the filter matches."""
        gone = self.describe(acl_filter)
        for acl in gone:
            self._bindings[acl.resource_type].pop(acl, None)
        return gone
