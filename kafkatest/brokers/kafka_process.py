"""Backend `kafka`: real Apache Kafka (KRaft) run from Maven Central jars.

This is the reference the emulator is held against, so it runs the same broker a
production cluster runs, with settings that only make tests quicker: no initial
rebalance delay, replication factor 1 for internal topics, frequent retention checks.
Alone, one JVM is broker and controller (combined mode); `kafka_cluster` runs several
of these as the nodes of one cluster, each given its `NodeRole`.

The settings a node starts with are made in kafka_properties.py; this module runs
the JVM: formats its storage, starts, waits for, stops and kills it.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import ClassVar

from confluent_kafka.admin import AdminClient

from kafkatest._ground import tempdirs
from kafkatest._ground.tempdirs import owned_tempdir
from kafkatest.brokers import kafka_files, kafka_users, process
from kafkatest.brokers.base import Broker
from kafkatest.brokers.capabilities import RUN_HERE, Capability
from kafkatest.brokers.kafka_properties import (
    LOG4J2,
    TEST_SETTINGS,
    HarnessSecrets,
    NodeListeners,
    NodeRole,
    features_off_format_args,
    new_cluster_id,
    scram_format_args,
    server_properties,
)
from kafkatest.brokers.security import BrokerSecurity
from kafkatest.config import jvm_flags_for_tests
from kafkatest.errors import BrokerError, SetupError
from kafkatest.jars.class_archive import JvmArchive, kafka_jvm_archive
from kafkatest.jars.coordinates import kafka_version
from kafkatest.security import Security

__all__ = ["LOG4J2", "TEST_SETTINGS", "KafkaProcessBroker", "NodeRole", "new_cluster_id"]


class KafkaProcessBroker(Broker):
    """A KRaft broker+controller JVM on free loopback ports, data in a temp dir."""

    backend = "kafka"
    #: A JVM kafkatest starts: SIGSTOP pauses it, its log directory is ours, its
    #: listeners and release are kafkatest's choice; no hook inside it.
    capabilities: ClassVar[frozenset[Capability]] = RUN_HERE | {
        Capability.KAFKA_VERSION,
        Capability.SHARED_BY_WORKERS,
    }

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
        #: The super users' passwords, drawn for this broker (kept across restarts).
        self._harness = HarnessSecrets() if acls else None
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
        #: None: `kafkatest.config.jvm_flags_for_tests` (quick to start) and a
        #: class-data-sharing archive; the bench gives Kafka's own choice, to time the
        #: broker as it is deployed (and without an archive).
        self.jvm_flags: tuple[str, ...] | None = None
        #: The running JVM's archive, to complete once it has exited.
        self._archive = JvmArchive()

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
        """(topic, partition) -> where the log cleaner's next pass starts."""
        return {} if self._workdir is None else kafka_files.cleaner_checkpoints(self._data_dir)

    def segment_bases(self, topic: str, partition: int) -> list[int]:
        """Base offsets of the partition's log segments, from its segment files."""
        if self._workdir is None:
            return []
        return kafka_files.segment_bases(self._data_dir, topic, partition)

    def broker_log_text(self, since: int = 0) -> str:
        """The broker's log from byte `since` (see `broker_log_size`)."""
        return "" if self.log_path is None else kafka_files.text_since(self.log_path, since)

    def broker_log_size(self) -> int:
        return 0 if self.log_path is None else kafka_files.size_of(self.log_path)

    @property
    def _data_dir(self) -> Path:
        assert self._workdir is not None
        return self._workdir / "data"

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
                security = self._security
                if not security.tls_dir:  # certificates in the broker's own work directory
                    security = dataclasses.replace(security, tls_dir=self._workdir / "tls")
                self.security_runtime = BrokerSecurity(security)
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
        self._archive_done()

    def kill(self) -> None:
        """SIGKILL the broker (a crash); its data stays for `start`."""
        if self._process is not None:
            process.kill_now(self._process)
            self._process = None
        self._archive_done()

    def _archive_done(self) -> None:
        """The JVM has exited: keep the class archive it wrote, if it wrote one."""
        archive, self._archive = self._archive, JvmArchive()
        archive.exited()

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

    def diagnostics(self, topics: Sequence[str] = ()) -> str:
        if self.log_path is None:
            return ""
        found = process.warnings_tail(self.log_path)
        about = process.lines_naming(self.log_path, topics)
        return (
            f"broker log: {self.log_path}"
            + (
                f"\n--- its last warnings and errors ---\n{found}"
                if found
                else " (no warning or error)"
            )
            + (f"\n--- its last lines about this test's topics ---\n{about}" if about else "")
        )

    # -- internals -------------------------------------------------------------------

    def _write_config(self) -> None:
        assert self._workdir is not None
        listeners = NodeListeners(
            self.host, self.listener_name, self._port, self._controller_port, self._admin_port
        )
        properties = server_properties(
            listeners,
            self.node,
            self._data_dir,
            self.security_runtime,
            self._harness,
            self.super_users,
            self.settings,
        )
        text = "".join(f"{key}={value}\n" for key, value in properties.items())
        (self._workdir / "server.properties").write_text(text)
        (self._workdir / "log4j2.properties").write_text(
            LOG4J2.format(log=self._workdir / "broker.log")
        )

    def add_user(self, name: str, password: str, mechanism: str | None = None) -> None:
        """Let `name` log in with `password`: over `mechanism`, or every enabled one
        (SCRAM at run time, `kafka_users`; PLAIN by a restart, data kept)."""
        mechanisms = self._sasl_runtime().add_user(name, password, mechanism)
        kafka_users.add_scram_credentials(self, name, password, mechanisms)
        if "PLAIN" in mechanisms and self._workdir is not None:
            self.close_clients()
            self.stop()
            self._write_config()
            self.start()

    def _harness_login(self) -> tuple[str, str] | None:
        if self._harness is None or self._admin_port is None:
            return None
        return f"127.0.0.1:{self._admin_port}", self._harness.admin

    def _java_command(self, java: str, archive: JvmArchive, main: str, *args: str) -> list[str]:
        assert self._workdir is not None and self._classpath is not None
        return [
            java,
            *self._jvm_flags(),
            *archive.java_options,
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self._workdir / 'log4j2.properties'}",
            "-cp",
            self._classpath,
            main,
            *args,
        ]

    def _jvm_flags(self) -> tuple[str, ...]:
        chosen = self.jvm_flags if self.jvm_flags is not None else jvm_flags_for_tests()
        return (f"-Xmx{self.heap}", "-Xms256m", *chosen)

    def _class_archive(self, java: str, kind: str) -> JvmArchive:
        """The archive of this kind of Kafka JVM (broker, storage format), unless the
        bench chose the JVM's flags (it times Kafka as deployed, with none)."""
        if self.jvm_flags is not None or self._classpath is None:
            return JvmArchive()
        jars = [Path(jar) for jar in self._classpath.split(os.pathsep) if jar]
        return kafka_jvm_archive(kind, self.version, java, self._jvm_flags(), jars)

    def _format_storage(self, java: str) -> None:
        assert self._workdir is not None
        cluster_id = new_cluster_id() if self.node is None else self.node.cluster_id
        archive = self._class_archive(java, "format")
        command = self._java_command(
            java,
            archive,
            "kafka.tools.StorageTool",
            "format",
            # One argument: a random id may start with "-", which argparse takes for a flag.
            f"--cluster-id={cluster_id}",
            "-c",
            str(self._workdir / "server.properties"),
            *scram_format_args(self.security_runtime),
            *features_off_format_args(self.version or kafka_version()),
        )
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        finally:
            archive.exited()
        if result.returncode != 0:
            raise BrokerError(
                f"formatting Kafka storage failed (exit {result.returncode}):\n"
                f"{result.stdout[-2000:]}{result.stderr[-2000:]}"
            )

    def _launch(self, java: str) -> None:
        assert self._workdir is not None
        self._archive_done()  # a JVM that exited by itself may have written one
        self._archive = self._class_archive(java, "broker")
        command = self._java_command(
            java, self._archive, "kafka.Kafka", str(self._workdir / "server.properties")
        )
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
