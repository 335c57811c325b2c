"""The connection's principal reaches every request's context (authorization reads it)."""

from __future__ import annotations

from typing import Any

from confluent_kafka.admin import AdminClient

from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.faults import FaultDecision


class _RecordPrincipals:
    def __init__(self) -> None:
        self.seen: set[str] = set()

    async def before_dispatch(self, ctx: RequestContext, request: Any) -> FaultDecision | None:
        self.seen.add(ctx.principal)
        return None


def test_a_plaintext_connection_is_user_anonymous() -> None:
    with EmulatorBroker() as broker:
        recorder = _RecordPrincipals()
        broker.faults = recorder
        AdminClient({"bootstrap.servers": broker.bootstrap_servers}).list_topics(timeout=10)

    assert recorder.seen == {"User:ANONYMOUS"}
