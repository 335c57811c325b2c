"""Which ACL each config resource needs, on every backend (recorded on Kafka 4.1.1):
a group's configs need DESCRIBE_CONFIGS / ALTER_CONFIGS on the group, the broker's
loggers on the cluster, as a topic's need them on the topic."""

from __future__ import annotations

import uuid

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)

from kafkatest import Broker
from kafkatest.brokers.acl_client import ANONYMOUS


def _error(call: object) -> str | None:
    """The error's name a future ends with, or None when it succeeds."""
    try:
        call.result(30)  # type: ignore[attr-defined]
    except KafkaException as exc:
        return str(exc.args[0].name())
    return None


def test_group_configs_need_their_operation_on_the_group(acl_broker: Broker) -> None:
    group, other = f"cfg-{uuid.uuid4().hex[:8]}", f"cfg-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": acl_broker.bootstrap_servers})

    def alter(name: str) -> str | None:
        resource = ConfigResource(
            ResourceType.GROUP,
            name,
            incremental_configs=[
                ConfigEntry(
                    "consumer.session.timeout.ms",
                    "45000",
                    incremental_operation=AlterConfigOpType.SET,
                )
            ],
        )
        return _error(admin.incremental_alter_configs([resource])[resource])

    def describe(name: str) -> str | None:
        resource = ConfigResource(ResourceType.GROUP, name)
        return _error(admin.describe_configs([resource])[resource])

    assert alter(group) == "GROUP_AUTHORIZATION_FAILED"
    assert describe(group) == "GROUP_AUTHORIZATION_FAILED"
    acl_broker.allow(ANONYMOUS, "ALTER_CONFIGS", group=group)
    acl_broker.allow(ANONYMOUS, "DESCRIBE_CONFIGS", group=group)
    assert alter(group) is None
    assert describe(group) is None
    assert alter(other) == "GROUP_AUTHORIZATION_FAILED"
    # the cluster's configs operations do not reach a group
    acl_broker.allow(ANONYMOUS, "ALTER_CONFIGS", cluster=True)
    assert alter(other) == "GROUP_AUTHORIZATION_FAILED"
