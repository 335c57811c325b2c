"""The handler registry, the fault hook point, and config handlers via librdkafka."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import KafkaError
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
)
from kio.schema.errors import ErrorCode

from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.emulator.protocol.messages import request_schema, response_schema
from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.faults import FaultDecision, NoFaults
from kafkatest.emulator.server.handlers import load_handlers
from kafkatest.emulator.server.responses import NO_THROTTLE, make, response_types
from kafkatest.errors import BrokerError


def test_every_advertised_version_has_request_and_response_schemas() -> None:
    missing = [
        (spec.api_key, version)
        for spec in load_handlers().values()
        for version in range(spec.min_version, spec.max_version + 1)
        if request_schema(spec.api_key, version) is None
        or response_schema(spec.api_key, version) is None
    ]
    assert missing == []


class _CloseMetadataForClient:
    """Drops the connection of one client id's Metadata requests."""

    def __init__(self, client_id: str) -> None:
        self.client_id = client_id
        self.seen = 0

    async def before_dispatch(self, ctx: RequestContext, request: Any) -> FaultDecision | None:
        if ctx.api_key == 3 and ctx.client_id == self.client_id:
            self.seen += 1
            return FaultDecision(close_connection=True)
        return None


class _FailCreateTopics:
    """Answers CreateTopics with POLICY_VIOLATION through a substitute handler."""

    async def before_dispatch(self, ctx: RequestContext, request: Any) -> FaultDecision | None:
        if ctx.api_key != 19:
            return None

        async def refuse(ctx: RequestContext, request: Any) -> Any:
            types = response_types(ctx)
            return make(
                types.CreateTopicsResponse,
                throttle_time=NO_THROTTLE,
                topics=tuple(
                    make(
                        types.CreatableTopicResult,
                        name=t.name,
                        topic_id=None,
                        error_code=ErrorCode.policy_violation,
                        error_message="refused by a test",
                        num_partitions=-1,
                        replication_factor=-1,
                        configs=None,
                    )
                    for t in request.topics
                ),
            )

        return FaultDecision(handler=refuse)


def test_fault_hook_sees_every_request_and_can_intervene(
    new_topic: Callable[[], str],
) -> None:
    with EmulatorBroker() as broker:
        closer = _CloseMetadataForClient("doomed")
        broker.faults = closer
        doomed = AdminClient({"bootstrap.servers": broker.bootstrap_servers, "client.id": "doomed"})
        with pytest.raises(Exception):  # noqa: B017 - librdkafka raises its own KafkaException
            doomed.list_topics(timeout=1)
        assert closer.seen >= 1
        assert broker.list_topics() == [], "other clients are served"

        broker.faults = _FailCreateTopics()
        with pytest.raises(BrokerError, match="refused by a test"):
            broker.create_topic(new_topic())
        broker.faults = NoFaults()
        broker.create_topic(new_topic())


def test_config_operations_follow_kafka(
    emulator: EmulatorBroker, new_topic: Callable[[], str]
) -> None:
    name = new_topic()
    emulator.create_topic(name, config={"cleanup.policy": "delete", "retention.ms": "5000"})
    admin = emulator.admin()
    changes = ConfigResource(
        ConfigResource.Type.TOPIC,
        name,
        incremental_configs=[
            ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE),
            ConfigEntry(
                "cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND
            ),
        ],
    )
    for future in admin.incremental_alter_configs([changes]).values():
        future.result(10)
    config = emulator.topic_config(name)
    assert config["retention.ms"] == "604800000"
    assert config["cleanup.policy"] == "delete,compact"

    bad = ConfigResource(
        ConfigResource.Type.TOPIC,
        name,
        incremental_configs=[
            ConfigEntry("retention.ms", "soon", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    with pytest.raises(Exception) as refused:
        for future in admin.incremental_alter_configs([bad]).values():
            future.result(10)
    assert refused.value.args[0].code() == KafkaError.INVALID_CONFIG

    broker_resource = ConfigResource(ConfigResource.Type.BROKER, "1")
    entries = admin.describe_configs([broker_resource])[broker_resource].result(10)
    assert entries["auto.create.topics.enable"].value == "true"


def test_validate_only_creates_nothing(
    emulator: EmulatorBroker, new_topic: Callable[[], str]
) -> None:
    name = new_topic()
    futures = emulator.admin().create_topics(
        [NewTopic(name, 3, 1)], validate_only=True, operation_timeout=10
    )
    futures[name].result(10)
    assert name not in emulator.list_topics()
