"""Authorized operations as one principal sees them (Kafka's AuthHelper.authorizedOperations).

Handlers fill the authorized-operations fields of a describe answer as a broker
without an authorizer does: every operation of the resource's type, where the client
asked (`server/operations_field.py`). With ACLs on, each filled field is narrowed
here to what this principal may do to that resource, each operation asked of the
authorizer with its implications (an ALLOW of READ reports READ and DESCRIBE; a DENY
of ALTER removes ALTER only). The cluster's field is 0 for a principal without
DESCRIBE on the cluster, as Kafka answers. Fields the client did not ask for, and
entries Kafka leaves out (denied topics, groups answered with an error), stay
Integer.MIN_VALUE.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kafkatest.emulator.server.authorization.core import NARROWERS, RT, Check, Op
from kafkatest.emulator.server.operations_field import OPERATIONS_OMITTED, operations_field
from kafkatest.emulator.state.acls import CLUSTER_NAME, ResourceType


def _narrowed(check: Check, resource_type: ResourceType, name: str | None, field: int) -> int:
    """An asked-for field for this principal (an entry with no name keeps its field)."""
    if name is None:
        return field
    permitted = check.acls.permitted_operations(check.principal, check.host, resource_type, name)
    return operations_field(permitted)


def _cluster_field(check: Check, field: int) -> int:
    if field == OPERATIONS_OMITTED:
        return field
    if not check.cluster(Op.DESCRIBE):
        return 0
    return _narrowed(check, RT.CLUSTER, CLUSTER_NAME, field)


def _entries(
    check: Check, entries: tuple[Any, ...], field: str, name_field: str, resource_type: ResourceType
) -> tuple[Any, ...]:
    """Each entry with its `field` narrowed for the resource its `name_field` names."""
    return tuple(
        dataclasses.replace(
            entry,
            **{
                field: _narrowed(
                    check, resource_type, getattr(entry, name_field), getattr(entry, field)
                )
            },
        )
        if getattr(entry, field, OPERATIONS_OMITTED) != OPERATIONS_OMITTED
        else entry
        for entry in entries
    )


def _metadata(check: Check, response: Any) -> Any:
    """Metadata: each topic's field (v8+), and the cluster's (v8-10)."""
    changes: dict[str, Any] = {
        "topics": _entries(check, response.topics, "topic_authorized_operations", "name", RT.TOPIC)
    }
    if hasattr(response, "cluster_authorized_operations"):
        changes["cluster_authorized_operations"] = _cluster_field(
            check, response.cluster_authorized_operations
        )
    return dataclasses.replace(response, **changes)


def _describe_cluster(check: Check, response: Any) -> Any:
    return dataclasses.replace(
        response,
        cluster_authorized_operations=_cluster_field(check, response.cluster_authorized_operations),
    )


def _describe_topic_partitions(check: Check, response: Any) -> Any:
    return dataclasses.replace(
        response,
        topics=_entries(check, response.topics, "topic_authorized_operations", "name", RT.TOPIC),
    )


def _described_groups(check: Check, response: Any) -> Any:
    """DescribeGroups (v3+) and ConsumerGroupDescribe."""
    return dataclasses.replace(
        response,
        groups=_entries(check, response.groups, "authorized_operations", "group_id", RT.GROUP),
    )


NARROWERS.update(
    {
        3: _metadata,
        15: _described_groups,
        60: _describe_cluster,
        69: _described_groups,
        75: _describe_topic_partitions,
    }
)
