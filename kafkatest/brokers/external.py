"""Backend `external`: a cluster somebody else runs (``--kafka-bootstrap host:port``).

kafkatest never starts, stops or wipes it; tests stay isolated by their unique topics.
"""

from __future__ import annotations

from confluent_kafka.admin import AdminClient

from kafkatest.brokers.base import Broker, Options, Settings
from kafkatest.brokers.config import refuse_for_external
from kafkatest.errors import BrokerError


class ExternalBroker(Broker):
    """An existing Kafka cluster reached at `bootstrap_servers`."""

    backend = "external"
    #: Nothing beyond the wire: somebody else runs it (no capabilities).

    @classmethod
    def from_options(cls, config: Settings, bootstrap: str | None, options: Options) -> Broker:
        refuse_for_external(config)
        if not bootstrap:
            raise BrokerError("the external backend needs --kafka-bootstrap host:port")
        return cls(bootstrap)

    def __init__(self, bootstrap_servers: str, connect_timeout_s: float = 15.0) -> None:
        if not bootstrap_servers or ":" not in bootstrap_servers:
            raise BrokerError(
                f"--kafka-bootstrap must be host:port[,host:port], got {bootstrap_servers!r}"
            )
        self._bootstrap = bootstrap_servers
        self.connect_timeout_s = connect_timeout_s

    @property
    def bootstrap_servers(self) -> str:
        return self._bootstrap

    def start(self) -> None:
        """Check the cluster answers; fail fast with the address if it does not."""
        admin = AdminClient(self.client_config())
        try:
            metadata = admin.list_topics(timeout=self.connect_timeout_s)
        except Exception as exc:
            raise BrokerError(
                f"the external cluster at {self._bootstrap} did not answer metadata within "
                f"{self.connect_timeout_s:.0f}s: {exc}"
            ) from exc
        if not metadata.brokers:
            raise BrokerError(f"the external cluster at {self._bootstrap} lists no brokers")

    def close(self) -> None:
        self.close_clients()
