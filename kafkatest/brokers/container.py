"""Backend `container`: Kafka in Docker through testcontainers, for users who have Docker.

Without a reachable Docker engine it fails at once with a message saying so, rather
than hanging in testcontainers' connection retries.
"""

from __future__ import annotations

from typing import Any, ClassVar

from kafkatest.brokers.base import Broker, Options, Settings
from kafkatest.brokers.capabilities import RUN_BY_KAFKATEST, Capability
from kafkatest.brokers.config import container_environment
from kafkatest.errors import BrokerError, SetupError

#: The default release (kafkatest.jars.coordinates.DEFAULT_KAFKA_VERSION); the image formats
#: its own storage, so share and streams groups are on there (Kafka 4.2+ defaults).
DEFAULT_IMAGE = "apache/kafka:4.3.1"


def docker_engine_problem() -> str | None:
    """None when a Docker engine answers; else why not, in words a user can act on."""
    try:
        import docker
    except ImportError:
        return "the docker Python package is missing: pip install 'kafkatest[container]'"
    try:
        client = docker.from_env(timeout=3)
        client.ping()
        client.close()
    except Exception as exc:
        return f"no Docker engine answers ({type(exc).__name__}: {exc})"
    return None


class ContainerBroker(Broker):
    """A Kafka container started by testcontainers' Kafka module."""

    backend = "container"
    #: Stopped and started by kafkatest; its listener, clock and process are Docker's.
    capabilities: ClassVar[frozenset[Capability]] = RUN_BY_KAFKATEST

    @classmethod
    def from_options(cls, config: Settings, bootstrap: str | None, options: Options) -> Broker:
        return cls(environment=container_environment(config), **options)  # type: ignore[arg-type]

    def __init__(
        self, image: str = DEFAULT_IMAGE, environment: dict[str, str] | None = None
    ) -> None:
        self.image = image
        #: Broker settings as the image's KAFKA_* variables (`kafkatest.brokers.config`).
        self.environment = dict(environment or {})
        self._container: Any = None
        self._bootstrap: str | None = None
        self._paused = False

    @property
    def bootstrap_servers(self) -> str:
        if self._bootstrap is None:
            raise BrokerError("the container backend is not started")
        return self._bootstrap

    def start(self) -> None:
        if self._container is not None:
            if self._paused:
                self._container.get_wrapped_container().unpause()
                self._paused = False
            return
        problem = docker_engine_problem()
        if problem is not None:
            raise SetupError(
                f"the container backend needs Docker: {problem}. Use --kafka-backend=emulator "
                "(default) or --kafka-backend=kafka, which need no Docker."
            )
        try:
            from testcontainers.kafka import KafkaContainer
        except ImportError as exc:
            raise SetupError(
                "testcontainers is not installed: pip install 'kafkatest[container]'"
            ) from exc
        container = KafkaContainer(self.image)
        if hasattr(container, "with_kraft"):
            container = container.with_kraft()
        for name, value in self.environment.items():
            container = container.with_env(name, value)
        container.start()
        self._container = container
        self._bootstrap = container.get_bootstrap_server()

    def stop(self) -> None:
        """Pause the container: clients see the broker vanish, and `start` resumes it."""
        if self._container is None:
            raise BrokerError("the container backend is not started")
        self._container.get_wrapped_container().pause()
        self._paused = True

    def close(self) -> None:
        self.close_clients()
        if self._container is not None:
            self._container.stop()
            self._container = None
            self._bootstrap = None
