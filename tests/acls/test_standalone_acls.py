"""`kafkatest emulator --acls --super-user ...`, as a CI suite outside pytest runs it:
a super user manages the ACLs, the other users get what they allow."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from kafkatest.brokers.process import free_port
from tests.standalone_emulator import standalone_emulator


def _sasl(bootstrap: str, user: str) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": user,
        "sasl.password": f"{user}-secret",
    }


@pytest.fixture
def standalone() -> Iterator[str]:
    with standalone_emulator(
        "--security-protocol", "SASL_PLAINTEXT", "--user", "admin:admin-secret",
        "--user", "alice:alice-secret", "--acls", "--super-user", "User:admin",
        banner_lines=3,
    ) as (bootstrap, lines):  # fmt: skip
        assert "ACLs on (a resource without ACLs is denied); super users: User:admin" in lines[2]
        yield bootstrap
        # The test's clients go while the emulator still runs: pytest.raises keeps a
        # traceback, so they sit in a reference cycle, and collected after the emulator
        # stopped they printed librdkafka's "Connection refused" to the terminal.
        gc.collect()


def _produce(bootstrap: str, user: str, topic: str) -> KafkaError | None:
    outcome: list[KafkaError | None] = []
    producer = Producer({**_sasl(bootstrap, user), "message.timeout.ms": 10000})
    producer.produce(topic, b"v", on_delivery=lambda err, _msg: outcome.append(err))
    producer.flush(20)
    assert outcome, "the producer neither delivered nor failed"
    return outcome[0]


def test_the_super_user_grants_and_the_others_are_held_to_it(standalone: str) -> None:
    admin = AdminClient(_sasl(standalone, "admin"))
    for topic in ("orders", "payroll"):
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    grant = AclBinding(
        ResourceType.TOPIC,
        "orders",
        ResourcePatternType.LITERAL,
        "User:alice",
        "*",
        AclOperation.WRITE,
        AclPermissionType.ALLOW,
    )
    admin.create_acls([grant])[grant].result(30)

    assert _produce(standalone, "alice", "orders") is None
    refused = _produce(standalone, "alice", "payroll")
    assert refused is not None and refused.name() == "TOPIC_AUTHORIZATION_FAILED"
    assert _produce(standalone, "admin", "payroll") is None
    # alice may not manage ACLs: CreateAcls needs ALTER on the cluster.
    alice = AdminClient(_sasl(standalone, "alice"))
    with pytest.raises(KafkaException) as denied:
        alice.create_acls([grant])[grant].result(30)
    assert denied.value.args[0].name() == "CLUSTER_AUTHORIZATION_FAILED"


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--super-user", "User:admin"], "--super-user needs --acls"),
        (["--acls", "--super-user", "admin"], "--super-user expects a principal like User:admin"),
    ],
)
def test_bad_acl_flags_are_refused_with_the_fix(flags: list[str], says: str) -> None:
    finished = subprocess.run(
        [sys.executable, "-m", "kafkatest.cli", "emulator", "--port", str(free_port()), *flags],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode != 0
    assert says in finished.stderr
