"""The authorized-operations fields of describe answers: Metadata (v8+),
DescribeCluster, DescribeTopicPartitions, DescribeGroups (v3+) and
ConsumerGroupDescribe.

Kafka sends Integer.MIN_VALUE when the client did not ask, and otherwise a 32-bit
field with bit `code` set for each operation the principal may perform. Handlers
answer as a broker without an authorizer does (every operation of the type); while
ACLs are on, the authorization layer narrows each field a client asked for to its
principal's (`authorization/operations.py`).
"""

from __future__ import annotations

from collections.abc import Iterable

from kafkatest.emulator.state.acls import REPORTED_OPERATIONS, AclOperation, ResourceType

#: Kafka's "authorized operations not requested" (Integer.MIN_VALUE).
OPERATIONS_OMITTED = -(2**31)


def operations_field(operations: Iterable[AclOperation]) -> int:
    """Kafka's bit field (Utils.to32BitField): bit `code` set per operation."""
    return sum(1 << operation for operation in set(operations))


def unrestricted_operations(resource_type: ResourceType, asked: bool) -> int:
    """What a broker without an authorizer reports: every operation, if asked."""
    return operations_field(REPORTED_OPERATIONS[resource_type]) if asked else OPERATIONS_OMITTED
