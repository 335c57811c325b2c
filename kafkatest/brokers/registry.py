"""Choosing a backend by name, as ``--kafka-backend`` and ``kafkatest demo`` do.

A backend is its `Broker` class: the class says how it is made from the options
(`Broker.from_options`) and what it can do (`Broker.capabilities`), so nothing
here or above compares a backend's name.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import cast

from kafkatest.brokers.base import Broker
from kafkatest.brokers.capabilities import Capability
from kafkatest.config import environment
from kafkatest.errors import BrokerError

#: Backend name -> the module and class that is it, imported when first asked for
#: (a backend's imports, a JVM's or Docker's helpers, cost nothing until then).
BACKEND_CLASSES: dict[str, str] = {
    "emulator": "kafkatest.brokers.emulator:EmulatorBroker",
    # one node or a cluster: KafkaClusterBroker.from_options picks
    "kafka": "kafkatest.brokers.kafka_cluster:KafkaClusterBroker",
    "container": "kafkatest.brokers.container:ContainerBroker",
    "external": "kafkatest.brokers.external:ExternalBroker",
}
BACKENDS = tuple(BACKEND_CLASSES)


#: What fixtures and the demo use unless told otherwise (KAFKATEST_BACKEND overrides).
DEFAULT_BACKEND = "emulator"


def default_backend() -> str:
    return environment("KAFKATEST_BACKEND") or DEFAULT_BACKEND


def backend_class(backend: str) -> type[Broker]:
    """The `Broker` class of the named backend; unknown names are refused by name."""
    path = BACKEND_CLASSES.get(backend)
    if path is None:
        raise BrokerError(f"unknown Kafka backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    module, name = path.split(":")
    return cast("type[Broker]", getattr(importlib.import_module(module), name))


def capabilities_of(backend: str) -> frozenset[Capability]:
    """What the named backend can do, as its class declares."""
    return backend_class(backend).capabilities


def backends_with(*needed: Capability) -> frozenset[str]:
    """The names of the backends that can do everything in `needed`."""
    return frozenset(name for name in BACKENDS if set(needed) <= capabilities_of(name))


def make_broker(
    backend: str | None = None, bootstrap: str | None = None, **options: object
) -> Broker:
    """A not-yet-started broker of the named backend.

    Broker settings are Kafka's property names in `config` on every backend
    (`kafkatest.brokers.config`); one a backend cannot honour is refused by name.
    `brokers=N` runs N brokers (emulator: in one process; kafka: an N-node KRaft
    cluster with a dedicated controller).
    Security is asked for with `security` (a `kafkatest.security.Security`) or the
    keywords `security_protocol`, `sasl_mechanisms`, `users`, `ssl_client_auth`,
    `tls_dir` and `delegation_tokens` (default True: served whenever SCRAM is on),
    on the emulator and kafka backends.
    """
    cls = backend_class(backend or default_backend())
    options = _with_security(cls, options)
    config = cast("Mapping[str, object] | None", options.pop("config", None))
    return cls.from_options(config, bootstrap, options)


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


_SECURITY_KEYWORDS = (
    "security_protocol",
    "sasl_mechanisms",
    "users",
    "ssl_client_auth",
    "tls_dir",
    "delegation_tokens",
)


def _with_security(cls: type[Broker], options: dict[str, object]) -> dict[str, object]:
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
            delegation_tokens=bool(given.get("delegation_tokens", True)),
        )
    if security is None or not getattr(security, "secured", False):
        options.pop("security", None)
        return options
    if Capability.LISTENERS not in cls.capabilities:
        able = " or ".join(sorted(backends_with(Capability.LISTENERS)))
        raise BrokerError(
            f"the {cls.backend} backend cannot be started with security "
            f"({security.protocol}); use the {able} backend"  # type: ignore[attr-defined]
        )
    options["security"] = security
    return options
