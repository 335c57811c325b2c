"""One shape for broker settings on every backend: Kafka's own property names.

``start_broker(backend, config={"auto.create.topics.enable": "false"})`` means the
same on each backend: real Kafka gets the properties in its server.properties, a
container gets them as ``KAFKA_*`` environment variables, and the emulator maps the
ones it implements onto its `BrokerSettings`. A setting a backend cannot honour is
refused by name, with what it does honour, so a test never runs on a broker that
silently ignored what it asked for.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from kafkatest.emulator import SETTINGS, BrokerSettings as _Fields
from kafkatest.errors import BrokerError

#: More brokers than this is a typo, not a test cluster (each is a JVM).
MAX_KAFKA_BROKERS = 9

if TYPE_CHECKING:
    from kafkatest.emulator import BrokerSettings


def _boolean(name: str, value: object) -> bool:
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise BrokerError(f"broker setting {name}={value!r}: expected true or false")
    return text == "true"


def _integer(name: str, value: object) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        raise BrokerError(f"broker setting {name}={value!r}: expected a whole number") from None


#: BrokerSettings field -> its type's name ("bool", "int"), which picks the parser.
_FIELD_TYPES = {field.name: str(field.type) for field in dataclasses.fields(_Fields)}
_PARSERS: dict[str, Callable[[str, object], object]] = {"bool": _boolean, "int": _integer}

#: Kafka property -> (BrokerSettings field, parser): what the emulator honours, from the
#: one table of broker settings (`kafkatest.emulator.state.broker_settings.SETTINGS`).
EMULATOR_SETTINGS: dict[str, tuple[str, Callable[[str, object], object]]] = {
    s.name: (s.field, _PARSERS[_FIELD_TYPES[s.field]])
    for s in SETTINGS
    if s.field is not None and s.settable
}

#: Broker configs that set a topic config's default (the `log.*` twins, and the
#: coarser retention and roll synonyms): the emulator's topics fall back on them.
TOPIC_DEFAULT_SETTINGS = frozenset(
    {
        "log.cleanup.policy",
        "compression.type",
        "compression.gzip.level",
        "compression.lz4.level",
        "compression.zstd.level",
        "log.cleaner.delete.retention.ms",
        "log.cleaner.max.compaction.lag.ms",
        "log.cleaner.min.compaction.lag.ms",
        "log.cleaner.min.cleanable.ratio",
        "log.message.timestamp.type",
        "log.message.timestamp.before.max.ms",
        "log.message.timestamp.after.max.ms",
        "min.insync.replicas",
        "log.retention.bytes",
        "log.retention.ms",
        "log.retention.minutes",
        "log.retention.hours",
        "log.segment.bytes",
        "log.roll.ms",
        "log.roll.hours",
        "log.roll.jitter.ms",
        "log.roll.jitter.hours",
        "unclean.leader.election.enable",
    }
)

#: Properties kafkatest itself decides for the kafka backend (ports, paths, roles).
KAFKA_MANAGED = frozenset(
    {
        "node.id",
        "process.roles",
        "listeners",
        "advertised.listeners",
        "listener.security.protocol.map",
        "controller.listener.names",
        "controller.quorum.voters",
        "controller.quorum.bootstrap.servers",
        "inter.broker.listener.name",
        "log.dirs",
    }
)


def emulator_settings(config: Mapping[str, object] | None) -> BrokerSettings:
    """`config` as the emulator's settings; a property it does not implement is refused."""
    from kafkatest.emulator import BrokerSettings

    settings = BrokerSettings()
    if not config:
        return settings
    defaults = {name: value for name, value in config.items() if name in TOPIC_DEFAULT_SETTINGS}
    config = {name: value for name, value in config.items() if name not in defaults}
    if defaults:
        settings = dataclasses.replace(settings, topic_defaults=_topic_defaults(defaults))
    unknown = sorted(name for name in config if name not in EMULATOR_SETTINGS)
    if unknown:
        raise BrokerError(
            f"the emulator does not implement broker setting(s) {', '.join(unknown)}; it "
            f"honours {', '.join(sorted(EMULATOR_SETTINGS))} and the defaults of topic "
            "configs (log.retention.ms, log.cleanup.policy, ...). Set topic-level configs on "
            "the topic (create_topic(..., config=...)), or use --kafka-backend=kafka."
        )
    changes: dict[str, Any] = {
        EMULATOR_SETTINGS[name][0]: EMULATOR_SETTINGS[name][1](name, value)
        for name, value in config.items()
    }
    return dataclasses.replace(settings, **changes)


def _topic_defaults(config: Mapping[str, object]) -> tuple[tuple[str, str], ...]:
    """Topic-default settings, each checked as Kafka checks its type and bounds."""
    from kafkatest.emulator import StateError, check_requirements, check_value

    given = {
        name: str(value).lower() if isinstance(value, bool) else str(value).strip()
        for name, value in config.items()
    }
    for name, value in given.items():
        try:
            check_value(name, value)
            check_requirements(name, value, cleaner_threads=1)
        except StateError as exc:
            raise BrokerError(f"broker setting {name}={value!r}: {exc}") from None
    return tuple(given.items())


def kafka_settings(config: Mapping[str, object] | None) -> dict[str, str]:
    """`config` for real Kafka's server.properties; kafkatest's own wiring is refused."""
    if not config:
        return {}
    managed = sorted(name for name in config if name in KAFKA_MANAGED)
    if managed:
        raise BrokerError(
            f"broker setting(s) {', '.join(managed)} are kafkatest's to set on the kafka "
            "backend (ports, listeners, roles and paths it chooses); leave them out"
        )
    return {
        name: str(value).lower() if isinstance(value, bool) else str(value)
        for name, value in config.items()
    }


def container_environment(config: Mapping[str, object] | None) -> dict[str, str]:
    """`config` as the ``KAFKA_*`` variables Kafka's images turn into properties."""
    return {
        "KAFKA_" + name.upper().replace(".", "_"): value
        for name, value in kafka_settings(config).items()
    }


def refuse_for_external(config: Mapping[str, object] | None) -> None:
    if config:
        raise BrokerError(
            f"an external cluster's settings are its own: kafkatest cannot set "
            f"{', '.join(sorted(config))} on it. Configure the cluster, or drop config=."
        )
