"""ACLs as data: `broker.allow(...)`, `broker.deny(...)`, `broker.acls()`, over the wire.

These go through CreateAcls / DescribeAcls / DeleteAcls from kafkatest's own admin
client, which acts as a super user on a broker started with ``acls=True``, so the
same call sets up real Kafka and the emulator alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePatternType,
    ResourceType,
)

from kafkatest.brokers.client_waits import DEFAULT_TIMEOUT_S, admin_result, wait_until
from kafkatest.brokers.topic_client import Reach
from kafkatest.errors import BrokerError

#: The CLUSTER resource's one name.
CLUSTER = "kafka-cluster"
#: The principal of an unauthenticated (PLAINTEXT) connection.
ANONYMOUS = "User:ANONYMOUS"
#: kafkatest's own clients (seeding, sink readers, faults, these ACL calls) act as
#: this principal, a super user, on a broker with ACLs.
ADMIN_PRINCIPAL = "User:kafkatest"
#: The user kafkatest logs in as on its own listener: ADMIN_PRINCIPAL's name.
ADMIN_LOGIN = ADMIN_PRINCIPAL.split(":", 1)[1]


def harness_listener_config(
    bootstrap_servers: str, password: str, base: Mapping[str, Any]
) -> dict[str, Any]:
    """The settings of kafkatest's own clients on a broker with ACLs: `base` (their
    client id and logger) on the harness's SASL/PLAIN listener, logged in as
    ADMIN_PRINCIPAL, a super user.

    A login, as Kafka needs it: a value every request carries in clear (the client
    id) must not be what makes a client the harness. Both backends use these.
    """
    return {
        "client.id": base["client.id"],
        "logger": base["logger"],
        "bootstrap.servers": bootstrap_servers,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanisms": "PLAIN",
        "sasl.username": ADMIN_LOGIN,
        "sasl.password": password,
    }


@dataclass(frozen=True, order=True)
class Acl:
    """One ACL as a test reads it back: `broker.acls()` returns these."""

    principal: str
    operation: str
    permission: str
    resource_type: str
    resource_name: str
    pattern: str = "LITERAL"
    host: str = "*"


_RESOURCE_TYPES = {
    "topic": ResourceType.TOPIC,
    "group": ResourceType.GROUP,
    "cluster": ResourceType.BROKER,
    "transactional_id": ResourceType.TRANSACTIONAL_ID,
}


def _enum_value(kind: type, name: str, what: str) -> object:
    try:
        return kind[name.upper()]  # type: ignore[index]
    except KeyError:
        choices = ", ".join(m.name for m in kind if m.name not in ("UNKNOWN", "ANY", "MATCH"))  # type: ignore[attr-defined]
        raise BrokerError(f"unknown ACL {what} {name!r}; choose one of {choices}") from None


def _resource(
    topic: str | None, group: str | None, cluster: bool, transactional_id: str | None
) -> tuple[ResourceType, str]:
    chosen = [
        (kind, name)
        for kind, name in (
            ("topic", topic),
            ("group", group),
            ("cluster", CLUSTER if cluster else None),
            ("transactional_id", transactional_id),
        )
        if name is not None
    ]
    if len(chosen) != 1:
        raise BrokerError(
            "name exactly one resource: topic=..., group=..., transactional_id=... or "
            f"cluster=True (got {', '.join(k for k, _ in chosen) or 'none'})"
        )
    kind, name = chosen[0]
    return _RESOURCE_TYPES[kind], name


class AclClient:
    """Managing a broker's ACLs (the broker must run with ``acls=True``); a `Broker`
    holds one (``broker.acl_client``) and offers its methods as its own."""

    def __init__(self, broker: Reach) -> None:
        self._broker = broker

    def allow(
        self,
        principal: str,
        operation: str,
        *,
        topic: str | None = None,
        group: str | None = None,
        cluster: bool = False,
        transactional_id: str | None = None,
        pattern: str = "LITERAL",
        host: str = "*",
    ) -> None:
        """Add an ALLOW ACL, e.g. ``broker.allow("User:ANONYMOUS", "READ", topic="orders")``.

        `pattern` is ``"LITERAL"`` (the name, or ``"*"`` for every name) or
        ``"PREFIXED"`` (every name starting with it); `operation` is a Kafka operation
        name (READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS,
        ALTER_CONFIGS, IDEMPOTENT_WRITE, CLUSTER_ACTION, ALL).
        """
        self._create_acl(
            "ALLOW", principal, operation, topic, group, cluster, transactional_id, pattern, host
        )

    def deny(
        self,
        principal: str,
        operation: str,
        *,
        topic: str | None = None,
        group: str | None = None,
        cluster: bool = False,
        transactional_id: str | None = None,
        pattern: str = "LITERAL",
        host: str = "*",
    ) -> None:
        """Add a DENY ACL (a matching DENY beats every ALLOW); arguments as `allow`."""
        self._create_acl(
            "DENY", principal, operation, topic, group, cluster, transactional_id, pattern, host
        )

    def acls(self) -> list[Acl]:
        """Every ACL the broker holds."""
        found = admin_result(self._broker.admin().describe_acls(ALL_ACLS), "describing ACLs")
        return sorted(_acl(binding) for binding in found) if found else []

    def remove_acls(self) -> list[Acl]:
        """Delete every ACL; returns what was deleted."""
        futures = self._broker.admin().delete_acls([ALL_ACLS])
        deleted = admin_result(futures[ALL_ACLS], "deleting ACLs")
        wait_until(lambda: not self.acls(), DEFAULT_TIMEOUT_S, "the deleted ACLs no longer apply")
        return sorted(_acl(binding) for binding in deleted)

    def _create_acl(
        self,
        permission: str,
        principal: str,
        operation: str,
        topic: str | None,
        group: str | None,
        cluster: bool,
        transactional_id: str | None,
        pattern: str,
        host: str,
    ) -> None:
        if ":" not in principal:
            raise BrokerError(f"principal {principal!r} needs a type, e.g. 'User:{principal}'")
        resource_type, name = _resource(topic, group, cluster, transactional_id)
        binding = AclBinding(
            resource_type,
            name,
            _enum_value(ResourcePatternType, pattern, "pattern"),  # type: ignore[arg-type]
            principal,
            host,
            _enum_value(AclOperation, operation, "operation"),  # type: ignore[arg-type]
            AclPermissionType[permission],
        )
        what = f"ACL {permission} {operation} for {principal} on {name}"
        futures = self._broker.admin().create_acls([binding])
        admin_result(futures[binding], f"adding {what}")
        # Kafka's controller commits the ACL before its broker's authorizer applies it;
        # DescribeAcls is answered from that authorizer, so once it lists the ACL,
        # requests are judged by it.
        wait_until(lambda: _acl(binding) in self.acls(), DEFAULT_TIMEOUT_S, f"{what} applies")


#: Matches every ACL (the stubs type the None wildcards as str).
ALL_ACLS = AclBindingFilter(
    ResourceType.ANY,
    cast(str, None),
    ResourcePatternType.ANY,
    cast(str, None),
    cast(str, None),
    AclOperation.ANY,
    AclPermissionType.ANY,
)


def _name(value: object) -> str:
    """An enum member's name (the stubs also allow the str or int it was made from)."""
    return str(getattr(value, "name", value))


def _acl(binding: AclBinding) -> Acl:
    kind = _name(binding.restype)
    return Acl(
        principal=binding.principal,
        operation=_name(binding.operation),
        permission=_name(binding.permission_type),
        resource_type="cluster" if kind == "BROKER" else kind.lower(),
        resource_name=binding.name,
        pattern=_name(binding.resource_pattern_type),
        host=binding.host,
    )
