"""The server.properties a `kafka` backend node starts with, and its log4j2 configuration.

Which roles, listeners, TLS and SASL settings and authorizer a node gets is a
question of configuration alone: kept apart from running the JVM (kafka_process.py)
so that every setting the backend makes, and why, can be read in one place.
"""

from __future__ import annotations

import base64
import dataclasses
import secrets
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path

from kafkatest.brokers.acl_client import ADMIN_PRINCIPAL
from kafkatest.brokers.security import BrokerSecurity
from kafkatest.emulator import KAFKA_BACKEND
from kafkatest.jars.coordinates import release_tuple
from kafkatest.security import ADMIN_USER, jaas_config

#: Broker settings for fast, single-node tests (from the one table of broker settings,
#: `kafkatest.emulator.state.broker_settings.SETTINGS`). Users may override any of them.
TEST_SETTINGS: dict[str, str] = dict(KAFKA_BACKEND)


@dataclasses.dataclass(frozen=True)
class NodeRole:
    """What one JVM is in a multi-node cluster (see `kafka_cluster`)."""

    node_id: int
    #: "broker" or "controller": a cluster's nodes are dedicated, never combined.
    role: str
    cluster_id: str
    #: `controller.quorum.voters`, the same on every node.
    voters: str
    #: The controller's own listener (controller role only).
    controller_port: int | None = None


@dataclasses.dataclass(frozen=True)
class NodeListeners:
    """Where one node listens; a port is None where the node has no such listener."""

    #: Where the client listener binds and what it advertises.
    host: str
    #: The client listener's name (its security protocol's name).
    name: str
    port: int | None
    controller_port: int | None
    #: kafkatest's own SASL/PLAIN listener, with ACLs only.
    admin_port: int | None


_BROKER_PRINCIPAL = "User:kafkatest-broker"


@dataclasses.dataclass(frozen=True)
class HarnessSecrets:
    """The passwords of the two super users of a broker with ACLs: the broker's own
    login (to its controller) and kafkatest's (on the KAFKATEST listener).

    Drawn per broker, as the emulator draws its harness's: a password written in the
    source would let any local process log in as a super user and read or change
    what a test's ACLs protect. They live in the broker's server.properties, in its
    private work directory, and in this process.
    """

    broker: str = dataclasses.field(default_factory=lambda: secrets.token_urlsafe(24))
    admin: str = dataclasses.field(default_factory=lambda: secrets.token_urlsafe(24))

    def __repr__(self) -> str:
        return "HarnessSecrets(...)"


LOG4J2 = """\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.org.name = org.apache.kafka
logger.org.level = INFO
"""


def server_properties(
    listeners: NodeListeners,
    node: NodeRole | None,
    data_dir: Path,
    security: BrokerSecurity | None,
    acls: HarnessSecrets | None,
    super_users: Iterable[str],
    settings: Mapping[str, str],
) -> dict[str, str]:
    """Everything a node's server.properties says; the user's `settings` win. With
    ACLs (`acls`: the secrets of its super users' logins), the authorizer is on."""
    return {
        **_node_properties(listeners, node),
        "log.dirs": str(data_dir),
        **_security_properties(security, listeners.name),
        **(_acl_properties(listeners, super_users, security, acls) if acls else {}),
        **settings,
    }


def _node_properties(listeners: NodeListeners, node: NodeRole | None) -> dict[str, str]:
    """Roles, ids and listeners: one combined node, or this node of a cluster."""
    listener, host, port = listeners.name, listeners.host, listeners.port
    protocols = f"CONTROLLER:PLAINTEXT,{listener}:{listener}"
    if node is None:
        return {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{listeners.controller_port}",
            "listeners": f"{listener}://{host}:{port},"
            f"CONTROLLER://127.0.0.1:{listeners.controller_port}",
            "advertised.listeners": f"{listener}://{host}:{port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": listener,
            "listener.security.protocol.map": protocols,
        }
    common = {
        "process.roles": node.role,
        "node.id": str(node.node_id),
        "controller.quorum.voters": node.voters,
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": protocols,
    }
    if node.role == "controller":
        return {**common, "listeners": f"CONTROLLER://127.0.0.1:{listeners.controller_port}"}
    return {
        **common,
        "listeners": f"{listener}://{host}:{port}",
        "advertised.listeners": f"{listener}://{host}:{port}",
        "inter.broker.listener.name": listener,
    }


def _security_properties(runtime: BrokerSecurity | None, listener: str) -> dict[str, str]:
    """The client listener's TLS and SASL settings, the harness's user as inter-broker login."""
    if runtime is None:
        return {}
    security = runtime.security
    prefix = f"listener.name.{listener.lower()}."
    properties: dict[str, str] = {}
    if runtime.server is not None and runtime.ca is not None:
        properties.update(
            {
                "ssl.keystore.type": "PEM",
                "ssl.keystore.location": str(runtime.server.keystore_pem),
                "ssl.truststore.type": "PEM",
                "ssl.truststore.location": str(runtime.ca.ca_pem),
                "ssl.client.auth": security.client_auth,
            }
        )
    if security.sasl:
        properties["sasl.enabled.mechanisms"] = ",".join(security.mechanisms)
        properties["sasl.mechanism.inter.broker.protocol"] = security.mechanisms[0]
        for mechanism in security.mechanisms:
            login = jaas_config(mechanism, ADMIN_USER, security.users[ADMIN_USER])
            if mechanism == "PLAIN":
                # PLAIN's users live in the listener's JAAS entry, as user_<name>="<password>".
                users = " ".join(f'user_{u}="{pw}"' for u, pw in security.users.items())
                login = login.rstrip(";") + f" {users};"
            properties[f"{prefix}{mechanism.lower()}.sasl.jaas.config"] = login
    if runtime.token_secret is not None:
        # Tokens are on: the controller signs them with it (KRaft needs nothing else).
        properties["delegation.token.secret.key"] = runtime.token_secret
    return properties


#: Features the `kafka` backend formats its storage with at level 0, where the release
#: would turn them on for a new cluster (each from the release named): share groups
#: (KIP-932, production-ready and on by default from Kafka 4.2) and streams groups
#: (KIP-1071, on from 4.2). The emulator serves neither; both backends answer their
#: APIs as a Kafka with the feature off does (`tests/emulator/test_share_groups_off_wire.py`).
FEATURES_OFF: dict[str, str] = {"share.version": "4.2", "streams.version": "4.2"}


def features_off_format_args(version: str) -> list[str]:
    """`--feature NAME=0` for each of `FEATURES_OFF` that `version` would turn on."""
    return [
        f"--feature={name}=0"
        for name, since in FEATURES_OFF.items()
        if release_tuple(version) >= release_tuple(since)
    ]


def scram_format_args(runtime: BrokerSecurity | None) -> list[str]:
    """SCRAM credentials known before the first start go in with the storage format."""
    if runtime is None or not runtime.security.sasl:
        return []
    return [
        f"--add-scram={mechanism}=[name={user},password={password}]"
        for mechanism in runtime.security.mechanisms
        if mechanism != "PLAIN"
        for user, password in runtime.security.users.items()
    ]


def _acl_properties(
    listeners: NodeListeners,
    extra_super_users: Iterable[str],
    runtime: BrokerSecurity | None,
    harness: HarnessSecrets,
) -> dict[str, str]:
    """StandardAuthorizer with the broker and kafkatest as super users.

    The broker reaches its controller, and kafkatest its broker, as named
    principals over SASL/PLAIN listeners of their own: on PLAINTEXT both would be
    User:ANONYMOUS, the principal tests write ACLs for.
    """
    listener, host, port = listeners.name, listeners.host, listeners.port
    super_users = [_BROKER_PRINCIPAL, ADMIN_PRINCIPAL, *extra_super_users]
    if runtime is not None:
        super_users.append(runtime.admin_principal)
    broker_user, admin_user = _BROKER_PRINCIPAL.split(":")[1], ADMIN_PRINCIPAL.split(":")[1]
    users = f'user_{broker_user}="{harness.broker}" user_{admin_user}="{harness.admin}"'
    jaas = (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="{broker_user}" password="{harness.broker}" {users};'
    )
    return {
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": ";".join(dict.fromkeys(super_users)),
        "listeners": f"{listener}://{host}:{port},"
        f"CONTROLLER://127.0.0.1:{listeners.controller_port},"
        f"KAFKATEST://127.0.0.1:{listeners.admin_port}",
        "advertised.listeners": f"{listener}://{host}:{port},"
        f"KAFKATEST://127.0.0.1:{listeners.admin_port}",
        "inter.broker.listener.name": "KAFKATEST",
        "listener.security.protocol.map": f"CONTROLLER:SASL_PLAINTEXT,{listener}:{listener},"
        "KAFKATEST:SASL_PLAINTEXT",
        "sasl.mechanism.controller.protocol": "PLAIN",
        "sasl.mechanism.inter.broker.protocol": "PLAIN",
        "listener.name.controller.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.controller.plain.sasl.jaas.config": jaas,
        "listener.name.kafkatest.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.kafkatest.plain.sasl.jaas.config": jaas,
    }


def new_cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes, URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
