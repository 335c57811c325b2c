"""Choosing a backend by name, as ``--kafka-backend`` and ``kafkatest demo`` do."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import cast

from kafkatest.brokers.base import Broker
from kafkatest.brokers.config import (
    container_environment,
    emulator_settings,
    kafka_settings,
    refuse_for_external,
)
from kafkatest.errors import BrokerError

BACKENDS = ("emulator", "kafka", "container", "external")


#: What fixtures and the demo use unless told otherwise (KAFKATEST_BACKEND overrides).
DEFAULT_BACKEND = "emulator"


def default_backend() -> str:
    return os.environ.get("KAFKATEST_BACKEND") or DEFAULT_BACKEND


def make_broker(
    backend: str | None = None, bootstrap: str | None = None, **options: object
) -> Broker:
    """A not-yet-started broker of the named backend.

    Broker settings are Kafka's property names in `config` on every backend
    (`kafkatest.brokers.config`); one a backend cannot honour is refused by name.
    `brokers=N` runs N brokers (emulator: in one process; kafka: an N-node KRaft
    cluster with a dedicated controller).
    Security is asked for with `security` (a `kafkatest.security.Security`) or the
    keywords `security_protocol`, `sasl_mechanisms`, `users`, `ssl_client_auth`
    and `tls_dir`, on the emulator and kafka backends.
    """
    backend = backend or default_backend()
    options = _with_security(backend, options)
    config = cast("Mapping[str, object] | None", options.pop("config", None))
    if backend == "emulator":
        from kafkatest.brokers.emulator import EmulatorBroker

        if config is not None:
            options["settings"] = emulator_settings(config)
        return EmulatorBroker(**options)  # type: ignore[arg-type]
    if backend == "kafka":
        from kafkatest.brokers.kafka_process import KafkaProcessBroker

        if config is not None:
            own = cast("Mapping[str, object]", options.get("settings") or {})
            options["settings"] = {**kafka_settings(config), **own}
        brokers = int(cast(int, options.pop("brokers", 1)))
        if brokers != 1:
            from kafkatest.brokers.kafka_cluster import KafkaClusterBroker

            return KafkaClusterBroker(brokers, **options)  # type: ignore[arg-type]
        return KafkaProcessBroker(**options)  # type: ignore[arg-type]
    if backend == "container":
        from kafkatest.brokers.container import ContainerBroker

        return ContainerBroker(environment=container_environment(config), **options)  # type: ignore[arg-type]
    if backend == "external":
        from kafkatest.brokers.external import ExternalBroker

        refuse_for_external(config)
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


_SECURITY_KEYWORDS = ("security_protocol", "sasl_mechanisms", "users", "ssl_client_auth", "tls_dir")


def _with_security(backend: str, options: dict[str, object]) -> dict[str, object]:
    """Fold the security keywords into one `Security` the backend is given."""
    given = {key: options.pop(key) for key in _SECURITY_KEYWORDS if key in options}
    security = options.get("security")
    if given:
        from kafkatest.security import Security

        if security is not None:
            raise BrokerError(f"pass either security= or {', '.join(given)}, not both")
        security = Security.of(
            protocol=str(given.get("security_protocol") or "PLAINTEXT"),
            mechanisms=given.get("sasl_mechanisms"),  # type: ignore[arg-type]
            users=given.get("users"),  # type: ignore[arg-type]
            client_auth=str(given.get("ssl_client_auth") or "none"),
            tls_dir=given.get("tls_dir"),  # type: ignore[arg-type]
        )
    if security is None or not getattr(security, "secured", False):
        options.pop("security", None)
        return options
    if backend not in ("emulator", "kafka"):
        raise BrokerError(
            f"the {backend} backend cannot be started with security "
            f"({security.protocol}); use the emulator or kafka backend"  # type: ignore[attr-defined]
        )
    options["security"] = security
    return options
