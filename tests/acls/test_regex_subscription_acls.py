"""A KIP-848 regex subscription under ACLs, on every backend: the topics a regex
resolves to are only those the member that triggered the resolution may describe
(KAFKA-18813, Kafka 4.0), re-checked whenever the regex is resolved again.

Observed on real Kafka 4.1.1 first; run with ``--kafka-backend=emulator,kafka``.
"""

from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from kafkatest import Broker

sys.path.insert(0, str(Path(__file__).parents[1] / "emulator"))
from group_wire import Session, assigned, known_topic_id, new_member, ready_session

pytestmark = pytest.mark.kafka_min_version(
    "4.0", "KIP-848 consumer groups are generally available from Kafka 4.0 (off in 3.9)"
)
ANONYMOUS = "User:ANONYMOUS"


Assignment = dict[uuid.UUID, list[int]]


def _heartbeat_until(
    session: Session,
    group: str,
    member: str,
    epoch: int,
    settled: Any,
    seconds: float,
    holding: Assignment | None = None,
) -> tuple[int, Assignment]:
    """Heartbeat as the member (holding `holding`) until its assignment satisfies
    `settled`: its epoch and assignment then."""
    holding = dict(holding or {})
    deadline = time.monotonic() + seconds
    while True:
        response = session.heartbeat(group, member, epoch)
        assert response.error_code.name == "none", response
        epoch = response.member_epoch
        now = assigned(response)
        if now is not None:
            holding = now
        if settled(holding):
            return epoch, holding
        assert time.monotonic() < deadline, f"the assignment stayed {holding}"
        time.sleep(0.25)


def test_a_regex_resolves_only_to_topics_the_member_may_describe(acl_broker: Broker) -> None:
    prefix = f"rx-{uuid.uuid4().hex[:6]}"
    readable, hidden, later = f"{prefix}-a", f"{prefix}-b", f"{prefix}-c"
    group = f"{prefix}-group"
    for topic in (readable, hidden):
        acl_broker.create_topic(topic, partitions=1)
    acl_broker.allow(ANONYMOUS, "READ", group=group)
    acl_broker.allow(ANONYMOUS, "READ", topic=readable)
    session = ready_session(acl_broker, group)
    try:
        readable_id = known_topic_id(session, readable)
        member = new_member()
        joined = session.heartbeat(group, member, 0, subscribed_topic_regex=f"{prefix}-.*")
        assert joined.error_code.name == "none", joined
        epoch, holding = _heartbeat_until(
            session, group, member, joined.member_epoch, bool, seconds=30
        )
        assert holding == {readable_id: [0]}
        # It stays so: the topic it may not describe is never added.
        settle_until = time.monotonic() + 2
        while time.monotonic() < settle_until:
            epoch, holding = _heartbeat_until(
                session, group, member, epoch, lambda _held: True, seconds=5, holding=holding
            )
            assert holding == {readable_id: [0]}
            time.sleep(0.25)

        # A permission given later counts at the next resolution, which a new
        # matching topic brings (Kafka resolves at most every 10 s).
        acl_broker.allow(ANONYMOUS, "DESCRIBE", topic=hidden)
        acl_broker.allow(ANONYMOUS, "DESCRIBE", topic=later)
        acl_broker.create_topic(later, partitions=1)
        _epoch, holding = _heartbeat_until(
            session, group, member, epoch, lambda held: len(held) == 3, seconds=40, holding=holding
        )
        assert set(holding) == {
            readable_id,
            known_topic_id(session, hidden),
            known_topic_id(session, later),
        }
    finally:
        session.close()
