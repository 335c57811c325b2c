"""Apache Kafka's own `kafka-acls` tool (AclCommand, from the 4.1 jars) on every backend.

The tool connects over PLAINTEXT, so it runs as User:ANONYMOUS: managing ACLs needs
ALTER on the cluster and listing them DESCRIBE, as on any Kafka with an authorizer.
"""

from __future__ import annotations

import subprocess

from kafkatest import Broker
from kafkatest.apps.tools import run_kafka_tool
from kafkatest.brokers.acl_client import ANONYMOUS, Acl

ACLS = "org.apache.kafka.tools.AclCommand"


def kafka_acls(broker: Broker, *args: str) -> subprocess.CompletedProcess[str]:
    return run_kafka_tool(
        ACLS, ["--bootstrap-server", broker.bootstrap_servers, *args], timeout_s=90
    )


def test_kafka_acls_adds_lists_and_removes(acl_broker: Broker) -> None:
    acl_broker.allow(ANONYMOUS, "ALTER", cluster=True)  # ALTER implies DESCRIBE

    added = kafka_acls(
        acl_broker, "--add", "--allow-principal", "User:alice", "--operation", "Read",
        "--operation", "Describe", "--topic", "orders", "--group", "spark-",
        "--resource-pattern-type", "prefixed",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert acl_broker.acls() == sorted(
        [Acl(ANONYMOUS, "ALTER", "ALLOW", "cluster", "kafka-cluster")]
        + [
            Acl("User:alice", op, "ALLOW", kind, name, pattern="PREFIXED")
            for op in ("READ", "DESCRIBE")
            for kind, name in (("topic", "orders"), ("group", "spark-"))
        ]
    )

    listed = kafka_acls(
        acl_broker, "--list", "--topic", "orders", "--resource-pattern-type", "prefixed"
    )
    assert listed.returncode == 0, listed.stderr
    assert (
        "Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=PREFIXED)`:"
        in listed.stdout
    )
    assert "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)" in listed.stdout
    assert (
        "(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW)" in listed.stdout
    )

    removed = kafka_acls(
        acl_broker, "--remove", "--force", "--allow-principal", "User:alice", "--operation", "Read",
        "--topic", "orders", "--resource-pattern-type", "prefixed",
    )  # fmt: skip
    assert removed.returncode == 0, removed.stderr
    remaining = {(a.principal, a.operation, a.resource_type) for a in acl_broker.acls()}
    assert ("User:alice", "READ", "topic") not in remaining
    assert ("User:alice", "DESCRIBE", "topic") in remaining


def test_kafka_acls_without_cluster_permission_is_refused(acl_broker: Broker) -> None:
    refused = kafka_acls(acl_broker, "--list")
    assert refused.returncode != 0
    assert "ClusterAuthorizationException" in refused.stdout + refused.stderr


def test_kafka_acls_on_a_broker_without_acls_says_no_authorizer(kafka_broker: Broker) -> None:
    result = kafka_acls(kafka_broker, "--list")
    output = result.stdout + result.stderr
    assert "SecurityDisabledException: No Authorizer is configured" in output, output
