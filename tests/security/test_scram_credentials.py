"""SCRAM credentials managed as Kafka manages them (KIP-554), on every backend:
Describe/AlterUserScramCredentials from confluent-kafka and from `kafka-configs`,
with ScramControlManager's and ScramImage's errors.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

from kafkatest import Broker
from kafkatest.apps.tools import run_kafka_tool

CONFIGS = "kafka.admin.ConfigCommand"  # kafka-configs (still in core, Scala, in 4.1)


def _logs_in(broker: Broker, user: str, password: str, mechanism: str) -> bool:
    config = {**broker.client_config(), "sasl.username": user, "sasl.password": password}
    config["sasl.mechanism"] = mechanism
    try:
        AdminClient(config).list_topics(timeout=3)
    except KafkaException:
        return False
    return True


def _eventually_logs_in(broker: Broker, user: str, password: str, mechanism: str) -> bool:
    """Kafka's controller accepts a credential a moment before the broker's cache has it."""
    for _ in range(20):
        if _logs_in(broker, user, password, mechanism):
            return True
        time.sleep(0.5)
    return False


def _error(future) -> tuple[str, str]:
    with pytest.raises(KafkaException) as failure:
        future.result(30)
    error = failure.value.args[0]
    # librdkafka 2.x keeps one stray byte after a flexible response's error message
    # (the same against real Kafka), so compare the text without it.
    return error.name(), error.str().rstrip("\x01")


def test_describe_lists_mechanisms_and_iterations_never_secrets(
    secured: Callable[[str], Broker],
) -> None:
    broker = secured("sasl_plaintext")
    described = broker.admin().describe_user_scram_credentials(["alice"])["alice"].result(30)

    infos = sorted((i.mechanism, i.iterations) for i in described.scram_credential_infos)
    assert infos == [(ScramMechanism.SCRAM_SHA_256, 4096), (ScramMechanism.SCRAM_SHA_512, 4096)]

    unknown = broker.admin().describe_user_scram_credentials(["nobody"])["nobody"]
    assert _error(unknown) == (
        "RESOURCE_NOT_FOUND",
        "Attempt to describe a user credential that does not exist: nobody",
    )


def test_alter_adds_then_deletes_a_credential_with_kafkas_rules(
    secured: Callable[[str], Broker],
) -> None:
    broker = secured("sasl_plaintext")
    admin = broker.admin()
    sha512 = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192)

    results = admin.alter_user_scram_credentials(
        [
            UserScramCredentialUpsertion("carol", sha512, b"carol-secret"),
            UserScramCredentialUpsertion(
                "dave", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 1000), b"x"
            ),
            UserScramCredentialUpsertion(
                "erin", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 20000), b"x"
            ),
            UserScramCredentialDeletion("frank", ScramMechanism.SCRAM_SHA_256),
        ]
    )

    results["carol"].result(30)
    assert _error(results["dave"]) == ("UNACCEPTABLE_CREDENTIAL", "Too few iterations")
    assert _error(results["erin"]) == ("UNACCEPTABLE_CREDENTIAL", "Too many iterations")
    assert _error(results["frank"]) == (
        "RESOURCE_NOT_FOUND",
        "Attempt to delete a user credential that does not exist",
    )
    assert _eventually_logs_in(broker, "carol", "carol-secret", "SCRAM-SHA-512")
    assert not _logs_in(broker, "carol", "wrong", "SCRAM-SHA-512")

    admin.alter_user_scram_credentials(
        [UserScramCredentialDeletion("carol", ScramMechanism.SCRAM_SHA_512)]
    )["carol"].result(30)
    for _ in range(20):
        if not _logs_in(broker, "carol", "carol-secret", "SCRAM-SHA-512"):
            break
        time.sleep(0.5)
    else:
        pytest.fail("carol still logs in after her credential was deleted")


def test_a_user_altered_twice_in_one_request_fails_as_a_whole(
    secured: Callable[[str], Broker],
) -> None:
    broker = secured("sasl_plaintext")
    info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096)
    results = broker.admin().alter_user_scram_credentials(
        [
            UserScramCredentialUpsertion("grace", info, b"one"),
            UserScramCredentialUpsertion("grace", info, b"two"),
        ]
    )
    assert _error(results["grace"]) == (
        "DUPLICATE_RESOURCE",
        "A user credential cannot be altered twice in the same request",
    )


def test_kafka_configs_adds_a_scram_user_who_can_then_log_in(
    secured: Callable[[str], Broker], tmp_path: Path
) -> None:
    broker = secured("sasl_ssl")
    admin_properties = broker.java_client_properties(tmp_path / "admin.properties")

    added = run_kafka_tool(
        CONFIGS,
        [
            "--bootstrap-server", broker.bootstrap_servers,
            "--command-config", str(admin_properties),
            "--alter", "--add-config", "SCRAM-SHA-512=[iterations=8192,password=bob-secret]",
            "--entity-type", "users", "--entity-name", "bob",
        ],
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert "Completed updating config for user bob." in added.stdout

    # (`kafka-configs --describe` of a user also lists its client quotas, which the
    # emulator does not serve: see docs/explanation/differences.md.)
    described = broker.admin().describe_user_scram_credentials(["bob"])["bob"].result(30)
    infos = [(i.mechanism, i.iterations) for i in described.scram_credential_infos]
    assert infos == [(ScramMechanism.SCRAM_SHA_512, 8192)]
    assert _eventually_logs_in(broker, "bob", "bob-secret", "SCRAM-SHA-512")


def test_add_user_lets_a_new_user_log_in(secured: Callable[[str], Broker]) -> None:
    broker = secured("sasl_ssl")
    broker.add_user("heidi", "heidi-secret", mechanism="SCRAM-SHA-512")

    assert _logs_in(broker, "heidi", "heidi-secret", "SCRAM-SHA-512")
    assert broker.client_config("heidi")["sasl.password"] == "heidi-secret"
