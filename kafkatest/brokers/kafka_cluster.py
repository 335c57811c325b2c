"""Backend `kafka` with several brokers: a real N-node KRaft cluster from the same jars.

One dedicated controller and N dedicated brokers (ids 1..N), each its own JVM with
its own data directory and port, as Kafka recommends for clusters: with the quorum
on its own node, stopping any broker is what it is in production (its partitions'
leadership moves to in-sync replicas elsewhere) and never costs the cluster its
metadata quorum. Internal topics are replicated to min(3, N) brokers, so groups
and transactions survive a broker's loss; a test's own topics get the replication
factor and `min.insync.replicas` it asks for.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar, cast

from confluent_kafka.admin import AdminClient

from kafkatest.brokers import process
from kafkatest.brokers.base import Broker, Options, Settings
from kafkatest.brokers.capabilities import Capability
from kafkatest.brokers.config import MAX_KAFKA_BROKERS, kafka_settings
from kafkatest.brokers.kafka_process import (
    TEST_SETTINGS,
    KafkaProcessBroker,
    NodeRole,
    new_cluster_id as _new_cluster_id,
)
from kafkatest.errors import BrokerError, SetupError
from kafkatest.security import Security

#: The dedicated controller's node id; brokers are 1..N, as on the emulator.
CONTROLLER_ID = 0


def cluster_settings(brokers: int) -> dict[str, str]:
    """Test settings for N brokers: internal topics replicated as far as N allows."""
    replicas = str(min(3, brokers))
    return {
        **TEST_SETTINGS,
        "offsets.topic.replication.factor": replicas,
        "transaction.state.log.replication.factor": replicas,
        "share.coordinator.state.topic.replication.factor": replicas,
    }


class KafkaClusterBroker(Broker):
    """N Kafka brokers and their controller on loopback; `bootstrap_servers` names all."""

    backend = "kafka"
    #: The same backend as one node: what it cannot do with several nodes (ACLs,
    #: security) it refuses when it is made.
    capabilities: ClassVar[frozenset[Capability]] = KafkaProcessBroker.capabilities

    @classmethod
    def from_options(cls, config: Settings, bootstrap: str | None, options: Options) -> Broker:
        """The `kafka` backend: one `KafkaProcessBroker`, or a cluster with `brokers=N`."""
        if config is not None:
            own = cast("Mapping[str, object]", options.get("settings") or {})
            options["settings"] = {**kafka_settings(config), **own}
        brokers = int(cast(int, options.pop("brokers", 1)))
        if brokers != 1:
            return cls(brokers, **options)  # type: ignore[arg-type]
        return KafkaProcessBroker(**options)  # type: ignore[arg-type]

    def __init__(
        self,
        brokers: int = 3,
        version: str | None = None,
        settings: Mapping[str, object] | None = None,
        heap: str = "512m",
        startup_timeout_s: float = 120.0,
        security: Security | None = None,
        acls: bool = False,
        super_users: Iterable[str] = (),
        host: str = "127.0.0.1",
    ) -> None:
        if not 2 <= brokers <= MAX_KAFKA_BROKERS:
            raise SetupError(
                f"brokers={brokers}: a kafka cluster has 2 to {MAX_KAFKA_BROKERS} brokers "
                "(1 is the default single node)"
            )
        if (security is not None and security.secured) or acls or tuple(super_users):
            raise SetupError(
                "a multi-node kafka cluster runs PLAINTEXT without ACLs: test TLS, SASL and "
                "ACLs on one node (brokers=1), where both backends support them"
            )
        self.broker_count = brokers
        self.host = host
        self.version = version
        self.settings = {
            **cluster_settings(brokers),
            **{k: str(v) for k, v in (settings or {}).items()},
        }
        self.heap = heap
        self.startup_timeout_s = startup_timeout_s
        self.controller: KafkaProcessBroker | None = None
        #: Broker id -> its node, in id order.
        self.nodes: dict[int, KafkaProcessBroker] = {}

    # -- Broker --------------------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        if not self.nodes:
            raise BrokerError("the kafka cluster is not started")
        return ",".join(node.bootstrap_servers for node in self.nodes.values())

    @property
    def broker_ids(self) -> list[int]:
        return list(self.nodes) or list(range(1, self.broker_count + 1))

    @property
    def pids(self) -> list[int]:
        """Every running JVM (pausing the cluster stops them all)."""
        return [pid for pid in (m.pid for m in self._members()) if pid is not None]

    def start(self) -> None:
        if not self.nodes:
            self._create_nodes()
        assert self.controller is not None
        members = [self.controller, *self.nodes.values()]
        try:
            # Formatting is a JVM per node: done side by side, then every node launched
            # before any waits (a broker is ready only once the controller is).
            with ThreadPoolExecutor(max_workers=len(members)) as pool:
                list(pool.map(lambda m: m.launch(), members))
            for member in members:
                member.wait_ready()
        except BaseException:
            for member in members:
                member.kill()
            raise

    def _members(self) -> list[KafkaProcessBroker]:
        """Brokers first, the controller last (the order to stop them in)."""
        return [*self.nodes.values(), *([self.controller] if self.controller else [])]

    def stop(self) -> None:
        """Stop every broker, then the controller; data stays for `start`."""
        self.close_clients()
        for member in self._members():
            member.stop()

    def kill(self) -> None:
        for member in self._members():
            member.kill()

    def close(self) -> None:
        self.close_clients()
        for member in self._members():
            member.close()
        self.nodes = {}
        self.controller = None

    def diagnostics(self, topics: Sequence[str] = ()) -> str:
        return "\n".join(text for m in self._members() if (text := m.diagnostics(topics)))

    # -- one broker at a time (faults) --------------------------------------------------

    def node(self, broker_id: int) -> KafkaProcessBroker:
        found = self.nodes.get(broker_id)
        if found is None:
            raise BrokerError(f"there is no broker {broker_id}; brokers are {self.broker_ids}")
        return found

    def running_broker_ids(self) -> list[int]:
        return [i for i, node in self.nodes.items() if node.pid is not None]

    def stop_node(self, broker_id: int, timeout_s: float = 60.0) -> None:
        """Shut one broker down as an operator would (controlled shutdown: its leaders
        move first), and return once the other brokers' metadata no longer lists it."""
        node = self.node(broker_id)
        self.close_clients()
        node.stop()
        self._wait_for_registered(
            lambda ids: broker_id not in ids, f"broker {broker_id} is gone", timeout_s
        )

    def start_node(self, broker_id: int) -> None:
        """Start a stopped broker with its data; returns once it is registered again."""
        node = self.node(broker_id)
        node.start()
        self.close_clients()

    def _wait_for_registered(self, done: Any, what: str, timeout_s: float) -> None:
        running = self.running_broker_ids()
        if not running:
            return
        admin = AdminClient(
            {"bootstrap.servers": ",".join(self.nodes[i].bootstrap_servers for i in running)}
        )
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if done(set(admin.list_topics(timeout=2.0).brokers)):
                    return
            except Exception:
                pass
            if time.monotonic() > deadline:
                raise BrokerError(f"timed out after {timeout_s:.0f}s waiting until {what}")
            time.sleep(0.1)

    # -- internals -------------------------------------------------------------------

    def _create_nodes(self) -> None:
        java = shutil.which("java")
        if java is None:
            raise SetupError(
                "the kafka backend runs Apache Kafka on the JVM and Java is not on PATH: "
                "install JDK 17+ (apt-get install openjdk-17-jdk), or use --kafka-backend=emulator"
            )
        from kafkatest.jars import kafka_broker_jars

        classpath = os.pathsep.join(str(j) for j in kafka_broker_jars(self.version))
        cluster_id = _new_cluster_id()
        controller_port = process.free_port()
        voters = f"{CONTROLLER_ID}@127.0.0.1:{controller_port}"

        def member(node_id: int, role: str, heap: str) -> KafkaProcessBroker:
            return KafkaProcessBroker(
                version=self.version,
                settings=self.settings,
                heap=heap,
                startup_timeout_s=self.startup_timeout_s,
                node=NodeRole(node_id, role, cluster_id, voters, controller_port),
                classpath=classpath,
                host=self.host,
            )

        self.controller = member(CONTROLLER_ID, "controller", "256m")
        self.nodes = {i: member(i, "broker", self.heap) for i in range(1, self.broker_count + 1)}
