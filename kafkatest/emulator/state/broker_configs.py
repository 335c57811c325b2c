"""Broker configs as DescribeConfigs shows them: the emulated Kafka's full set.

The table is data: ``data/kafka_broker_configs.json`` holds the broker configs of
the release the emulator answers as (`kafkatest.emulator.release`) at their defaults
(every key with its type, synonyms and documentation), taken from its
DescribeConfigs answer. On top come the settings
the broker is started with, shown as STATIC_BROKER_CONFIG as Kafka shows its
server.properties: the ones every KRaft broker needs (ids, listeners, log dir),
the quick-test settings kafkatest gives its `kafka` backend too (so e.g.
``num.partitions`` is a static 1 on both), and the emulator's `BrokerSettings`.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from importlib import resources

from kafkatest.emulator.state.broker_settings import SETTINGS, BrokerSettings, by_kafka_name
from kafkatest.emulator.state.cluster import Cluster

#: DescribeConfigs config sources.
DYNAMIC_DEFAULT_BROKER_CONFIG = 3
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5

#: Where the emulator says its (in-memory) logs live; DescribeLogDirs names it too.
LOG_DIR = "/kafkatest-emulator/data"

Synonym = tuple[str, str | None, int]


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    name: str
    value: str | None
    source: int
    read_only: bool
    sensitive: bool
    #: DescribeConfigs' config type code (1 BOOLEAN ... 9 PASSWORD).
    type: int
    #: Most specific first: the entry's own source, then the default it overrides.
    synonyms: tuple[Synonym, ...]
    documentation: str | None


@cache
def kafka_defaults() -> tuple[BrokerConfig, ...]:
    """The emulated release's broker configs, from the data file (read once)."""
    text = (
        resources.files("kafkatest.emulator.state")
        .joinpath("data/kafka_broker_configs.json")
        .read_text(encoding="utf-8")
    )
    return tuple(
        BrokerConfig(
            name=entry["name"],
            value=entry["value"],
            source=entry["source"],
            read_only=entry["read_only"],
            sensitive=entry["sensitive"],
            type=entry["type"],
            synonyms=tuple((s[0], s[1], s[2]) for s in entry["synonyms"]),
            documentation=entry["documentation"],
        )
        for entry in json.loads(text)["configs"]
    )


#: Settings the emulator behaves by and cannot change, which kafkatest also starts its
#: `kafka` backend with (broker_settings.SETTINGS); the others come from BrokerSettings.
QUICK_TEST_SETTINGS: dict[str, str] = {
    s.name: s.kafka_backend for s in SETTINGS if s.field is None and s.kafka_backend is not None
}

#: BrokerSettings that kafkatest's `kafka` backend also sets (so they show as static
#: even at Kafka's default); the others show as static only when changed.
SET_LIKE_THE_KAFKA_BACKEND = frozenset(
    s.name for s in SETTINGS if s.field is not None and s.kafka_backend is not None
)


def kafka_settings(s: BrokerSettings) -> dict[str, str]:
    """The BrokerSettings by Kafka config name, as DescribeConfigs shows them."""
    return by_kafka_name(s)


def static_settings(settings: dict[str, str], given: Collection[str] = ()) -> dict[str, str]:
    """The settings every emulated broker is started with, by Kafka name (the
    quick-test ones and the emulator's `BrokerSettings` that differ from Kafka's
    default, that the `kafka` backend sets too or that were `given` by name);
    `settings` by Kafka name."""
    defaults = _defaults_by_name()
    return {
        **QUICK_TEST_SETTINGS,
        **{
            name: value
            for name, value in settings.items()
            if name in SET_LIKE_THE_KAFKA_BACKEND or name in given or defaults.get(name) != value
        },
    }


def broker_wiring(cluster: Cluster, broker_id: int) -> dict[str, str]:
    """The settings that make a KRaft broker of this cluster: ids, listeners, log dir."""
    host, port = cluster.address(broker_id)
    controller_host, controller_port = cluster.address(cluster.controller_id)
    listener = f"PLAINTEXT://{host}:{port}"
    return {
        "process.roles": "broker,controller",
        "node.id": str(broker_id),
        "broker.id": str(broker_id),
        "listeners": listener,
        "advertised.listeners": listener,
        "inter.broker.listener.name": "PLAINTEXT",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "controller.quorum.voters": f"{cluster.controller_id}@{controller_host}:{controller_port}",
        "log.dirs": LOG_DIR,
    }


#: (source, values set at that level), most specific first.
Layers = list[tuple[int, Mapping[str, str]]]


def broker_configs(layers: Layers) -> list[BrokerConfig]:
    """Every config of a broker, as Kafka describes it: each key's value at the
    most specific level that sets it (per broker, cluster-wide, static), Kafka's
    default otherwise; custom keys set dynamically come last.

    Walking Kafka's 342 keys through the levels takes milliseconds, and requests
    ask for it once per resource they name (each topic a CreateTopics creates, each
    group an IncrementalAlterConfigs changes), so a request naming thousands held
    the event loop for tens of seconds: the answer is kept for the last few sets
    of levels, which change only when a broker config does.
    """
    key = tuple((source, tuple(values.items())) for source, values in layers)
    return list(_broker_configs_of(key))


@lru_cache(maxsize=8)
def _broker_configs_of(
    key: tuple[tuple[int, tuple[tuple[str, str], ...]], ...],
) -> tuple[BrokerConfig, ...]:
    layers: Layers = [(source, dict(values)) for source, values in key]
    described = [_described(entry, layers) for entry in kafka_defaults()]
    known = _defaults_by_name()
    custom = [
        name
        for _source, values in layers
        if _source != STATIC_BROKER_CONFIG
        for name in values
        if name not in known
    ]
    return (*described, *(_custom(name, layers) for name in dict.fromkeys(custom)))


def cluster_default_configs(cluster_default: Mapping[str, str]) -> list[BrokerConfig]:
    """The cluster-wide dynamic configs (DescribeConfigs of broker ""): only those
    set, each with only its cluster-wide synonyms, in the order they were set."""
    layers: Layers = [(DYNAMIC_DEFAULT_BROKER_CONFIG, cluster_default)]
    entries = {entry.name: entry for entry in kafka_defaults()}
    return [
        _described(entries[name], layers, fallback=False)
        if name in entries
        else _custom(name, layers)
        for name in cluster_default
    ]


def _described(entry: BrokerConfig, layers: Layers, fallback: bool = True) -> BrokerConfig:
    """One key through the levels, as Kafka's ConfigHelper lists it: the synonyms are
    every level's value of each of the key's synonym names (log.retention.ms,
    .minutes, .hours), most specific level first, from the key's own name on."""
    names = _synonym_names(entry.name)
    levels = [*layers, (DEFAULT_CONFIG, _defaults_by_name())] if fallback else layers
    synonyms: list[Synonym] = []
    for source, values in levels:
        for name in names:
            value = values.get(name)
            if value is not None:
                synonyms.append((name, None if entry.sensitive else value, source))
    while synonyms and synonyms[0][0] != entry.name:
        synonyms.pop(0)
    own = next((values[entry.name] for _s, values in layers if entry.name in values), None)
    value = entry.value if own is None else own
    return replace(
        entry,
        value=None if entry.sensitive else value,
        source=synonyms[0][2] if synonyms else DEFAULT_CONFIG,
        synonyms=tuple(synonyms),
    )


def _custom(name: str, layers: Layers) -> BrokerConfig:
    """A key Kafka does not know: kept, shown as sensitive (its type is unknown)."""
    synonyms = tuple((name, None, source) for source, values in layers if name in values)
    return BrokerConfig(
        name=name,
        value=None,
        source=synonyms[0][2],
        read_only=True,
        sensitive=True,
        type=0,
        synonyms=synonyms,
        documentation=None,
    )


_SYNONYM_GROUPS = (
    ("log.roll.ms", "log.roll.hours"),
    ("log.roll.jitter.ms", "log.roll.jitter.hours"),
    ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
)


def _synonym_names(name: str) -> tuple[str, ...]:
    """Kafka's `brokerConfigSynonyms`: the names that set the same thing."""
    if name == "log.flush.interval.ms":
        return (name, "log.flush.scheduler.interval.ms")
    return next((group for group in _SYNONYM_GROUPS if name in group), (name,))


@cache
def _defaults_by_name() -> dict[str, str | None]:
    """Kafka's default value of each broker config (None where it has none)."""
    return {
        entry.name: next((s[1] for s in entry.synonyms if s[2] == DEFAULT_CONFIG), None)
        for entry in kafka_defaults()
    }


def kafka_default(name: str) -> str | None:
    return _defaults_by_name().get(name)
