"""ALTER on the cluster guards Kafka's cluster administration APIs; on every backend.

Observed on Kafka 4.1.1 for User:ANONYMOUS without ACLs: UpdateFeatures and
UnregisterBroker (forwarded to the controller) are refused with the controller's
"... needs ALTER permission.", the voter changes with "Cluster authorization
failed.", AlterReplicaLogDirs partition by partition.
"""

from __future__ import annotations

import sys
from pathlib import Path

from kio.schema.errors import ErrorCode

from kafkatest import Broker

sys.path.insert(0, str(Path(__file__).parents[1] / "emulator"))
from admin_requests import UPGRADE, request_entity, update_features
from raw_client import ask
from test_cluster_admin_wire import add_voter, alter_replica_log_dirs, remove_voter

DENIED = ErrorCode.cluster_authorization_failed


def unregister(broker: Broker) -> object:
    request = request_entity("unregister_broker", 0, "UnregisterBrokerRequest", broker_id=99)
    return ask(broker.bootstrap_servers, 64, 0, request)


def test_cluster_admin_needs_alter_on_the_cluster(acl_broker: Broker) -> None:
    features = update_features(acl_broker, ("group.version", 1, UPGRADE), validate_only=True)
    assert features.error_code == DENIED
    assert features.error_message.endswith(" needs ALTER permission.")
    unregistered = unregister(acl_broker)
    assert unregistered.error_code == DENIED  # type: ignore[attr-defined]
    assert unregistered.error_message.endswith(" needs ALTER permission.")  # type: ignore[attr-defined]
    for answer in (add_voter(acl_broker, 5), remove_voter(acl_broker, 5)):
        assert (answer.error_code, answer.error_message) == (
            DENIED,
            "Cluster authorization failed.",
        )
    assert alter_replica_log_dirs(acl_broker, "/x", "t", 0, 1) == {
        ("t", 0): DENIED,
        ("t", 1): DENIED,
    }

    acl_broker.allow("User:ANONYMOUS", "ALTER", cluster=True)

    assert update_features(
        acl_broker, ("group.version", 1, UPGRADE), validate_only=True
    ).error_code == (ErrorCode.none)
    assert unregister(acl_broker).error_code == ErrorCode.broker_id_not_registered  # type: ignore[attr-defined]
    assert add_voter(acl_broker, 5).error_code == ErrorCode.unsupported_version
    assert alter_replica_log_dirs(acl_broker, "/x", "t", 0) == {
        ("t", 0): ErrorCode.log_dir_not_found
    }
