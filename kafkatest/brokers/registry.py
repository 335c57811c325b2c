"""Choosing a backend by name, as ``--kafka-backend`` and ``kafkatest demo`` do."""

from __future__ import annotations

import os

from kafkatest.brokers.base import Broker
from kafkatest.errors import BrokerError

BACKENDS = ("emulator", "kafka", "container", "external")


#: What fixtures and the demo use unless told otherwise (KAFKATEST_BACKEND overrides).
DEFAULT_BACKEND = "emulator"


def default_backend() -> str:
    return os.environ.get("KAFKATEST_BACKEND") or DEFAULT_BACKEND


def make_broker(
    backend: str | None = None, bootstrap: str | None = None, **options: object
) -> Broker:
    """A not-yet-started broker of the named backend."""
    backend = backend or default_backend()
    if backend == "emulator":
        from kafkatest.brokers.emulator import EmulatorBroker

        return EmulatorBroker(**options)  # type: ignore[arg-type]
    if backend == "kafka":
        from kafkatest.brokers.kafka_process import KafkaProcessBroker

        return KafkaProcessBroker(**options)  # type: ignore[arg-type]
    if backend == "container":
        from kafkatest.brokers.container import ContainerBroker

        return ContainerBroker(**options)  # type: ignore[arg-type]
    if backend == "external":
        from kafkatest.brokers.external import ExternalBroker

        if not bootstrap:
            raise BrokerError("the external backend needs --kafka-bootstrap host:port")
        return ExternalBroker(bootstrap)
    raise BrokerError(f"unknown Kafka backend {backend!r}; choose one of {', '.join(BACKENDS)}")


def start_broker(
    backend: str | None = None, bootstrap: str | None = None, **options: object
) -> Broker:
    """Make and start a broker; on a failed start release what it took."""
    broker = make_broker(backend, bootstrap, **options)
    try:
        broker.start()
    except BaseException:
        broker.close()
        raise
    return broker
