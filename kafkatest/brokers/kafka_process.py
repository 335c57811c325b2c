"""Backend `kafka`: real Apache Kafka (KRaft) run from Maven Central jars.

This is the reference the emulator is held against, so it runs the same broker a
production cluster runs, with settings that only make tests quicker: no initial
rebalance delay, replication factor 1 for internal topics, frequent retention checks.
Alone, one JVM is broker and controller (combined mode); `kafka_cluster` runs several
of these as the nodes of one cluster, each given its `NodeRole`.
"""

from __future__ import annotations

import base64
import dataclasses
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from confluent_kafka.admin import AdminClient

from kafkatest import tempdirs
from kafkatest.brokers import process
from kafkatest.brokers.acl_client import ADMIN_PRINCIPAL
from kafkatest.brokers.base import Broker
from kafkatest.brokers.security import BrokerSecurity
from kafkatest.errors import BrokerError, SetupError
from kafkatest.security import ADMIN_USER, Security, jaas_config
from kafkatest.tempdirs import owned_tempdir

#: Broker settings for fast, single-node tests. Users may override any of them.
TEST_SETTINGS: dict[str, str] = {
    "num.partitions": "1",
    "auto.create.topics.enable": "true",
    "delete.topic.enable": "true",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
    # KIP-848 consumer groups: Kafka's 5 s heartbeats and 45 s sessions made short
    # (the emulator's BrokerSettings use the same values).
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.session.timeout.ms": "10000",
    "group.consumer.min.session.timeout.ms": "10000",
    "log.retention.check.interval.ms": "500",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
    # Kafka's cleaner sleeps 15 s whenever it finds nothing to clean; 500 ms (as the
    # emulator) lets compacted topics compact within a test's patience.
    "log.cleaner.backoff.ms": "500",
    "log.initial.task.delay.ms": "0",
    "log.segment.delete.delay.ms": "0",
    "file.delete.delay.ms": "0",
}


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


_BROKER_PRINCIPAL = "User:kafkatest-broker"
#: Fixed secrets: the listener is on loopback and only ever serves tests.
_BROKER_SECRET = "kafkatest-broker-secret"
_ADMIN_SECRET = "kafkatest-admin-secret"

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


class KafkaProcessBroker(Broker):
    """A KRaft broker+controller JVM on free loopback ports, data in a temp dir."""

    backend = "kafka"

    def __init__(
        self,
        version: str | None = None,
        settings: Mapping[str, object] | None = None,
        heap: str = "1g",
        startup_timeout_s: float = 90.0,
        security: Security | None = None,
        acls: bool = False,
        super_users: Iterable[str] = (),
        node: NodeRole | None = None,
        classpath: str | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        self.version = version
        #: Where the client listener binds and what it advertises (loopback unless a
        #: Spark cluster's executors on other machines must reach it).
        self.host = host
        #: None: a one-node cluster of its own; else this node's place in a cluster.
        self.node = node
        self._security = security if security is not None and security.secured else None
        #: With ACLs: Kafka's StandardAuthorizer, and a SASL/PLAIN listener of its own
        #: for the broker itself and kafkatest's clients, both super users.
        self.acls_enabled = acls
        self.super_users = tuple(super_users)
        self._admin_port: int | None = None
        self.settings = {**TEST_SETTINGS, **{k: str(v) for k, v in (settings or {}).items()}}
        self.heap = heap
        self.startup_timeout_s = startup_timeout_s
        self._workdir: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._port: int | None = None
        self._controller_port: int | None = None
        self._classpath: str | None = classpath

    # -- Broker --------------------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        if self._port is None:
            raise BrokerError("the kafka backend is not started")
        return f"{self.host}:{self._port}"

    @property
    def node_id(self) -> int:
        return 1 if self.node is None else self.node.node_id

    @property
    def serves_clients(self) -> bool:
        """A dedicated controller has no client listener."""
        return self.node is None or self.node.role == "broker"

    @property
    def listener_name(self) -> str:
        """The client listener's name (its security protocol's name, as Kafka's default map)."""
        return self._security.protocol if self._security is not None else "PLAINTEXT"

    @property
    def pid(self) -> int | None:
        """The broker JVM's process id while it runs (fault injection pauses it)."""
        if self._process is None or self._process.poll() is not None:
            return None
        return self._process.pid

    @property
    def log_path(self) -> Path | None:
        return None if self._workdir is None else self._workdir / "broker.log"

    def cleaner_checkpoints(self) -> dict[tuple[str, int], int]:
        """(topic, partition) -> where the log cleaner's next pass starts, from the
        broker's `cleaner-offset-checkpoint` file (written after every pass)."""
        if self._workdir is None:
            return {}
        path = self._workdir / "data" / "cleaner-offset-checkpoint"
        try:
            lines = path.read_text().splitlines()
        except OSError:
            return {}
        out: dict[tuple[str, int], int] = {}
        for line in lines[2:]:  # version, count, then "topic partition offset"
            parts = line.split()
            if len(parts) == 3:
                out[(parts[0], int(parts[1]))] = int(parts[2])
        return out

    def segment_bases(self, topic: str, partition: int) -> list[int]:
        """Base offsets of the partition's log segments, from its segment files."""
        if self._workdir is None:
            return []
        directory = self._workdir / "data" / f"{topic}-{partition}"
        return sorted(int(p.stem) for p in directory.glob("*.log") if p.stem.isdigit())

    def broker_log_text(self, since: int = 0) -> str:
        """The broker's log from byte `since` (see `broker_log_size`)."""
        if self.log_path is None:
            return ""
        try:
            with self.log_path.open("rb") as log:
                log.seek(since)
                return log.read().decode(errors="replace")
        except OSError:
            return ""

    def broker_log_size(self) -> int:
        try:
            return 0 if self.log_path is None else self.log_path.stat().st_size
        except OSError:
            return 0

    def start(self) -> None:
        self.launch()
        self.wait_ready()

    def launch(self) -> None:
        """Start the JVM (formatting its storage the first time) without waiting for it:
        a cluster launches every node before any of them can become ready."""
        if self._process is not None and self._process.poll() is None:
            return
        java = shutil.which("java")
        if java is None:
            raise SetupError(
                "the kafka backend runs Apache Kafka on the JVM and Java is not on PATH: "
                "install JDK 17+ (apt-get install openjdk-17-jdk), or use --kafka-backend=emulator"
            )
        if self._classpath is None:
            from kafkatest.jars import kafka_broker_jars

            self._classpath = os.pathsep.join(str(j) for j in kafka_broker_jars(self.version))
        first_start = self._workdir is None
        if first_start:
            self._workdir = owned_tempdir("kafkatest-kafka-")
            if self.serves_clients:
                self._port = process.free_port()
            self._controller_port = (
                process.free_port() if self.node is None else self.node.controller_port
            )
            if self._security is not None:
                self.security_runtime = BrokerSecurity(
                    self._security
                    if self._security.tls_dir
                    else _with_tls_dir(self._security, self._workdir / "tls")
                )
            if self.acls_enabled:
                self._admin_port = process.free_port()
            self._write_config()
            self._format_storage(java)
        self._launch(java)

    def stop(self) -> None:
        """Shut the broker down cleanly; its data stays for `start`."""
        if self._process is not None:
            process.terminate(self._process)
            self._process = None

    def kill(self) -> None:
        """SIGKILL the broker (a crash); its data stays for `start`."""
        if self._process is not None:
            process.kill_now(self._process)
            self._process = None

    def close(self) -> None:
        self.close_clients()
        self.stop()
        if self._workdir is not None:
            tempdirs.remove(self._workdir)
            self._workdir = None
            self._port = None
        if self.security_runtime is not None:
            self.security_runtime.close()
            self.security_runtime = None

    def diagnostics(self) -> str:
        if self.log_path is None:
            return ""
        return f"--- tail of {self.log_path} ---\n{process.tail(self.log_path)}"

    # -- internals -------------------------------------------------------------------

    def _node_properties(self) -> dict[str, str]:
        """Roles, ids and listeners: one combined node, or this node of a cluster."""
        listener = self.listener_name
        protocols = f"CONTROLLER:PLAINTEXT,{listener}:{listener}"
        if self.node is None:
            return {
                "process.roles": "broker,controller",
                "node.id": "1",
                "controller.quorum.voters": f"1@127.0.0.1:{self._controller_port}",
                "listeners": f"{listener}://{self.host}:{self._port},"
                f"CONTROLLER://127.0.0.1:{self._controller_port}",
                "advertised.listeners": f"{listener}://{self.host}:{self._port}",
                "controller.listener.names": "CONTROLLER",
                "inter.broker.listener.name": listener,
                "listener.security.protocol.map": protocols,
            }
        common = {
            "process.roles": self.node.role,
            "node.id": str(self.node.node_id),
            "controller.quorum.voters": self.node.voters,
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": protocols,
        }
        if self.node.role == "controller":
            return {**common, "listeners": f"CONTROLLER://127.0.0.1:{self._controller_port}"}
        return {
            **common,
            "listeners": f"{listener}://{self.host}:{self._port}",
            "advertised.listeners": f"{listener}://{self.host}:{self._port}",
            "inter.broker.listener.name": listener,
        }

    def _write_config(self) -> None:
        assert self._workdir is not None
        properties = {
            **self._node_properties(),
            "log.dirs": str(self._workdir / "data"),
            **self._security_properties(),
            **(self._acl_properties() if self.acls_enabled else {}),
            **self.settings,
        }
        text = "".join(f"{key}={value}\n" for key, value in properties.items())
        (self._workdir / "server.properties").write_text(text)
        (self._workdir / "log4j2.properties").write_text(
            LOG4J2.format(log=self._workdir / "broker.log")
        )

    def _security_properties(self) -> dict[str, str]:
        """The client listener's TLS and SASL settings, the harness's user as inter-broker login."""
        runtime = self.security_runtime
        if runtime is None:
            return {}
        security = runtime.security
        prefix = f"listener.name.{self.listener_name.lower()}."
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
        return properties

    def _scram_format_args(self) -> list[str]:
        """SCRAM credentials known before the first start go in with the storage format."""
        runtime = self.security_runtime
        if runtime is None or not runtime.security.sasl:
            return []
        return [
            f"--add-scram={mechanism}=[name={user},password={password}]"
            for mechanism in runtime.security.mechanisms
            if mechanism != "PLAIN"
            for user, password in runtime.security.users.items()
        ]

    def add_user(self, name: str, password: str, mechanism: str | None = None) -> None:
        """Let `name` log in with `password`: over `mechanism`, or every enabled one.

        SCRAM users are added as Kafka adds them at run time
        (AlterUserScramCredentials, what ``kafka-configs --add-config`` sends) and
        this returns once the broker accepts the login. PLAIN users live in the
        listener's JAAS configuration, which Kafka reads at start-up only, so adding
        one restarts the broker (data kept), as an operator would have to.
        """
        runtime = self._sasl_runtime()
        mechanisms = runtime.add_user(name, password, mechanism)
        scram = [m for m in mechanisms if m != "PLAIN"]
        if scram:
            from confluent_kafka.admin import (
                ScramCredentialInfo,
                ScramMechanism,
                UserScramCredentialAlteration,
                UserScramCredentialUpsertion,
            )

            upserts: list[UserScramCredentialAlteration] = [
                UserScramCredentialUpsertion(
                    name,
                    ScramCredentialInfo(getattr(ScramMechanism, m.replace("-", "_")), 4096),
                    password.encode(),
                )
                for m in scram
            ]
            for future in self.admin().alter_user_scram_credentials(upserts).values():
                future.result(30)
            for m in scram:
                self._wait_for_login(name, m)
        if "PLAIN" in mechanisms and self._workdir is not None:
            self.close_clients()
            self.stop()
            self._write_config()
            self.start()

    def _wait_for_login(self, user: str, mechanism: str, timeout_s: float = 30.0) -> None:
        """The controller accepts a credential before the broker's cache has it."""
        deadline = time.monotonic() + timeout_s
        while True:
            admin = AdminClient(self.client_config(user, mechanism))
            try:
                admin.list_topics(timeout=2.0)
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise BrokerError(
                        f"user {user!r} could not log in with {mechanism} {timeout_s:.0f}s after "
                        f"its credential was added.\n{self.diagnostics()}"
                    ) from None
                time.sleep(0.2)

    def _acl_properties(self) -> dict[str, str]:
        """StandardAuthorizer with the broker and kafkatest as super users.

        The broker reaches its controller, and kafkatest its broker, as named
        principals over SASL/PLAIN listeners of their own: on PLAINTEXT both would be
        User:ANONYMOUS, the principal tests write ACLs for.
        """
        listener = self.listener_name
        super_users = [_BROKER_PRINCIPAL, ADMIN_PRINCIPAL, *self.super_users]
        if self.security_runtime is not None:
            super_users.append(self.security_runtime.admin_principal)
        broker_user, admin_user = _BROKER_PRINCIPAL.split(":")[1], ADMIN_PRINCIPAL.split(":")[1]
        users = f'user_{broker_user}="{_BROKER_SECRET}" user_{admin_user}="{_ADMIN_SECRET}"'
        jaas = (
            "org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="{broker_user}" password="{_BROKER_SECRET}" {users};'
        )
        return {
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": ";".join(dict.fromkeys(super_users)),
            "listeners": f"{listener}://{self.host}:{self._port},"
            f"CONTROLLER://127.0.0.1:{self._controller_port},KAFKATEST://127.0.0.1:{self._admin_port}",
            "advertised.listeners": f"{listener}://{self.host}:{self._port},"
            f"KAFKATEST://127.0.0.1:{self._admin_port}",
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

    def client_config(
        self, user: str | None = None, mechanism: str | None = None
    ) -> dict[str, Any]:
        """With ACLs, kafkatest's own clients (no `user`) are the super user
        User:kafkatest on the KAFKATEST listener."""
        config = super().client_config(user, mechanism)
        if user is None and self.acls_enabled and self._admin_port is not None:
            config = {
                "bootstrap.servers": f"127.0.0.1:{self._admin_port}",
                "client.id": config.get("client.id", "kafkatest"),
                "logger": config["logger"],
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanisms": "PLAIN",
                "sasl.username": ADMIN_PRINCIPAL.split(":")[1],
                "sasl.password": _ADMIN_SECRET,
            }
        return config

    def _java_command(self, java: str, main: str, *args: str) -> list[str]:
        assert self._workdir is not None and self._classpath is not None
        return [
            java,
            f"-Xmx{self.heap}",
            "-Xms256m",
            "-XX:+UseG1GC",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self._workdir / 'log4j2.properties'}",
            "-cp",
            self._classpath,
            main,
            *args,
        ]

    def _format_storage(self, java: str) -> None:
        assert self._workdir is not None
        cluster_id = new_cluster_id() if self.node is None else self.node.cluster_id
        command = self._java_command(
            java,
            "kafka.tools.StorageTool",
            "format",
            # One argument: a random id may start with "-", which argparse takes for a flag.
            f"--cluster-id={cluster_id}",
            "-c",
            str(self._workdir / "server.properties"),
            *self._scram_format_args(),
        )
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise BrokerError(
                f"formatting Kafka storage failed (exit {result.returncode}):\n"
                f"{result.stdout[-2000:]}{result.stderr[-2000:]}"
            )

    def _launch(self, java: str) -> None:
        assert self._workdir is not None
        command = self._java_command(java, "kafka.Kafka", str(self._workdir / "server.properties"))
        self._process = process.spawn(command, self._workdir / "stdout.log", self._workdir)

    def wait_ready(self) -> None:
        """Return once the broker answers Metadata naming itself (registered, unfenced);
        a dedicated controller once its JVM runs."""
        if self._process is None:
            raise BrokerError("the kafka backend is not started")
        if not self.serves_clients:
            self._wait_alive()
            return
        admin = AdminClient({**self.client_config(), "client.id": "kafkatest-probe"})
        deadline = time.monotonic() + self.startup_timeout_s
        while True:
            if self._process.poll() is not None:
                code = self._process.returncode
                self._process = None
                raise BrokerError(
                    f"Apache Kafka exited with status {code} while starting.\n{self.diagnostics()}"
                    f"\n--- stdout ---\n{process.tail(self._workdir / 'stdout.log') if self._workdir else ''}"
                )
            try:
                metadata = admin.list_topics(timeout=1.0)
                if self.node_id in metadata.brokers:
                    return
            except Exception:
                pass
            if time.monotonic() > deadline:
                self.kill()
                raise BrokerError(
                    f"Apache Kafka did not answer metadata within {self.startup_timeout_s:.0f}s."
                    f"\n{self.diagnostics()}"
                )
            time.sleep(0.1)

    def _wait_alive(self) -> None:
        assert self._process is not None
        if self._process.poll() is not None:
            code = self._process.returncode
            self._process = None
            raise BrokerError(
                f"the Kafka controller exited with status {code} while starting.\n{self.diagnostics()}"
            )


def new_cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes, URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


def _with_tls_dir(security: Security, directory: Path) -> Security:
    """`security` writing its certificates into the broker's own work directory."""
    return dataclasses.replace(security, tls_dir=directory)
