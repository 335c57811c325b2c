"""Topic configs: Kafka's names, defaults and types, and their validation.

Only overrides are stored per topic; DescribeConfigs shows every known config
with its default, marking which ones were set.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kafkatest.emulator.state.errors import InvalidConfig
from kafkatest.limits import MAX_INT, MAX_LONG

_MAX_LONG = "9223372036854775807"


@dataclass(frozen=True, slots=True)
class ConfigDefinition:
    name: str
    default: str
    #: Kafka's ConfigType names: BOOLEAN, STRING, INT, LONG, DOUBLE, LIST.
    kind: str
    choices: tuple[str, ...] = ()
    #: Kafka's `atLeast` / `between` bounds, for numeric configs.
    at_least: float | None = None
    at_most: float | None = None
    #: What DescribeConfigs says of it when asked (client metrics configs have it).
    documentation: str | None = None


_DEFINITIONS = [
    ConfigDefinition("cleanup.policy", "delete", "LIST", ("delete", "compact")),
    ConfigDefinition("compression.gzip.level", "-1", "INT"),
    ConfigDefinition("compression.lz4.level", "9", "INT", at_least=1, at_most=17),
    ConfigDefinition("compression.zstd.level", "3", "INT", at_least=-131072, at_most=22),
    ConfigDefinition(
        "compression.type",
        "producer",
        "STRING",
        ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
    ),
    ConfigDefinition("delete.retention.ms", "86400000", "LONG", at_least=0),
    ConfigDefinition("file.delete.delay.ms", "60000", "LONG", at_least=0),
    ConfigDefinition("flush.messages", _MAX_LONG, "LONG", at_least=1),
    ConfigDefinition("flush.ms", _MAX_LONG, "LONG", at_least=0),
    ConfigDefinition("follower.replication.throttled.replicas", "", "LIST"),
    ConfigDefinition("index.interval.bytes", "4096", "INT", at_least=0),
    ConfigDefinition("leader.replication.throttled.replicas", "", "LIST"),
    ConfigDefinition("local.retention.bytes", "-2", "LONG", at_least=-2),
    ConfigDefinition("local.retention.ms", "-2", "LONG", at_least=-2),
    ConfigDefinition("max.compaction.lag.ms", _MAX_LONG, "LONG", at_least=1),
    ConfigDefinition("max.message.bytes", "1048588", "INT", at_least=0),
    # Kafka 4.0 lowered the default to one hour (broker: log.message.timestamp.after.max.ms).
    ConfigDefinition("message.timestamp.after.max.ms", "3600000", "LONG", at_least=0),
    ConfigDefinition("message.timestamp.before.max.ms", _MAX_LONG, "LONG", at_least=0),
    ConfigDefinition(
        "message.timestamp.type", "CreateTime", "STRING", ("CreateTime", "LogAppendTime")
    ),
    ConfigDefinition("min.cleanable.dirty.ratio", "0.5", "DOUBLE", at_least=0, at_most=1),
    ConfigDefinition("min.compaction.lag.ms", "0", "LONG", at_least=0),
    ConfigDefinition("min.insync.replicas", "1", "INT", at_least=1),
    ConfigDefinition("preallocate", "false", "BOOLEAN"),
    ConfigDefinition("remote.log.copy.disable", "false", "BOOLEAN"),
    ConfigDefinition("remote.log.delete.on.disable", "false", "BOOLEAN"),
    ConfigDefinition("remote.storage.enable", "false", "BOOLEAN"),
    ConfigDefinition("retention.bytes", "-1", "LONG"),
    ConfigDefinition("retention.ms", "604800000", "LONG", at_least=-1),
    ConfigDefinition("segment.bytes", "1073741824", "INT", at_least=1024 * 1024),
    ConfigDefinition("segment.index.bytes", "10485760", "INT", at_least=4),
    ConfigDefinition("segment.jitter.ms", "0", "LONG", at_least=0),
    ConfigDefinition("segment.ms", "604800000", "LONG", at_least=1),
    ConfigDefinition("unclean.leader.election.enable", "false", "BOOLEAN"),
]

TOPIC_CONFIGS: dict[str, ConfigDefinition] = {d.name: d for d in _DEFINITIONS}

#: The broker config that sets each topic config's default (the first of Kafka's
#: ServerTopicConfigSynonyms): DescribeConfigs lists it among the topic config's
#: synonyms, and a value set on the broker is the topic's unless the topic sets one.
BROKER_SYNONYMS: dict[str, str] = {
    "cleanup.policy": "log.cleanup.policy",
    "compression.gzip.level": "compression.gzip.level",
    "compression.lz4.level": "compression.lz4.level",
    "compression.type": "compression.type",
    "compression.zstd.level": "compression.zstd.level",
    "delete.retention.ms": "log.cleaner.delete.retention.ms",
    "file.delete.delay.ms": "log.segment.delete.delay.ms",
    "flush.messages": "log.flush.interval.messages",
    "flush.ms": "log.flush.interval.ms",
    "index.interval.bytes": "log.index.interval.bytes",
    "local.retention.bytes": "log.local.retention.bytes",
    "local.retention.ms": "log.local.retention.ms",
    "max.compaction.lag.ms": "log.cleaner.max.compaction.lag.ms",
    "max.message.bytes": "message.max.bytes",
    "message.timestamp.after.max.ms": "log.message.timestamp.after.max.ms",
    "message.timestamp.before.max.ms": "log.message.timestamp.before.max.ms",
    "message.timestamp.type": "log.message.timestamp.type",
    "min.cleanable.dirty.ratio": "log.cleaner.min.cleanable.ratio",
    "min.compaction.lag.ms": "log.cleaner.min.compaction.lag.ms",
    "min.insync.replicas": "min.insync.replicas",
    "preallocate": "log.preallocate",
    "retention.bytes": "log.retention.bytes",
    "retention.ms": "log.retention.ms",
    "segment.bytes": "log.segment.bytes",
    "segment.index.bytes": "log.index.size.max.bytes",
    "segment.jitter.ms": "log.roll.jitter.ms",
    "segment.ms": "log.roll.ms",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
}

#: Configs Kafka accepts on a topic but never lists in DescribeConfigs.
#: internal.segment.bytes is segment.bytes without the 1 MiB minimum, for tests.
INTERNAL_TOPIC_CONFIGS: dict[str, ConfigDefinition] = {
    d.name: d for d in [ConfigDefinition("internal.segment.bytes", "", "INT")]
}


def validate_topic_config(name: str, value: str | None) -> str:
    """The value as stored; raises InvalidConfig as Kafka would."""
    definition = TOPIC_CONFIGS.get(name) or INTERNAL_TOPIC_CONFIGS.get(name)
    if definition is None:
        raise InvalidConfig(f"Unknown topic config name: {name}")
    if value is None:
        raise InvalidConfig(f"Null value not supported for topic configs: {name}")
    value = value.strip()
    try:
        if definition.kind in ("INT", "LONG"):
            # Java's Integer/Long.parseLong: a number outside the type is no number.
            bound = MAX_INT if definition.kind == "INT" else MAX_LONG
            if not -bound - 1 <= int(value) <= bound:
                raise ValueError(value)
        elif definition.kind == "DOUBLE":
            float(value)
        elif definition.kind == "BOOLEAN" and value.lower() not in ("true", "false"):
            raise ValueError(value)
    except ValueError:
        raise InvalidConfig(
            f"Invalid value {value} for configuration {name}: expected a {definition.kind.lower()}"
        ) from None
    _check_bounds(definition, value)
    if definition.kind == "BOOLEAN":
        value = value.lower()
    special = _SPECIAL_RULES.get(name)
    if special is not None:
        problem = special(value)
        if problem is not None:
            raise InvalidConfig(problem)
    if definition.choices:
        parts = [p.strip() for p in value.split(",")] if definition.kind == "LIST" else [value]
        bad = [p for p in parts if p not in definition.choices]
        if bad:
            raise InvalidConfig(
                f"Invalid value {value} for configuration {name}: "
                f"String must be one of: {', '.join(definition.choices)}"
            )
    return value


def _gzip_level(value: str) -> str | None:
    if int(value) == -1 or 1 <= int(value) <= 9:
        return None
    return (
        f"Invalid value {value} for configuration compression.gzip.level: "
        "Value must be between 1 and 9 or equal to -1"
    )


def _throttled_replicas(name: str) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        parts = [p.strip() for p in value.split(",") if p.strip()]
        if parts == ["*"] or all(re.fullmatch(r"\d+:\d+", p) for p in parts):
            return None
        return (
            f"Invalid value [{', '.join(parts)}] for configuration {name}: {name} must be the "
            "literal '*' or a list of replicas in the following format: "
            "[partitionId]:[brokerId],[partitionId]:[brokerId],..."
        )

    return check


def _remote_storage(value: str) -> str | None:
    """Tiered storage is off on the emulator, as on a Kafka broker without
    remote.log.storage.system.enable (kafkatest's `kafka` backend)."""
    if value == "true":
        return (
            "Tiered Storage functionality is disabled in the broker. "
            "Topic cannot be configured with remote log storage."
        )
    return None


#: Checks Kafka makes with its own text, beyond a type and bounds.
_SPECIAL_RULES: dict[str, Callable[[str], str | None]] = {
    "compression.gzip.level": _gzip_level,
    "leader.replication.throttled.replicas": _throttled_replicas(
        "leader.replication.throttled.replicas"
    ),
    "follower.replication.throttled.replicas": _throttled_replicas(
        "follower.replication.throttled.replicas"
    ),
    "remote.storage.enable": _remote_storage,
}


def _check_bounds(definition: ConfigDefinition, value: str) -> None:
    if definition.at_least is None and definition.at_most is None:
        return
    number = float(value)
    problem = None
    if definition.at_least is not None and number < definition.at_least:
        problem = f"Value must be at least {_bound(definition.at_least)}"
    elif definition.at_most is not None and number > definition.at_most:
        problem = f"Value must be no more than {_bound(definition.at_most)}"
    if problem:
        shown = java_double(value) if definition.kind == "DOUBLE" else value
        raise InvalidConfig(f"Invalid value {shown} for configuration {definition.name}: {problem}")


def java_double(text: str) -> str:
    """A parsed double as Java prints it (2 -> 2.0, 1e7 -> 1.0E7)."""
    number = float(text)
    if number != 0 and not 1e-3 <= abs(number) < 1e7:
        mantissa, exponent = f"{number:.15E}".split("E")
        mantissa = mantissa.rstrip("0")
        mantissa = mantissa + "0" if mantissa.endswith(".") else mantissa
        return f"{mantissa}E{int(exponent)}"
    return repr(number)


def _bound(value: float) -> str:
    """Bounds print as Java prints the Number Kafka declared (1048576, 0, 1)."""
    return str(int(value)) if value == int(value) else str(value)


def check_topic_configs(overrides: Mapping[str, str]) -> dict[str, str]:
    """Rules between configs, as Kafka's `LogConfig.validateValues`; `overrides` back."""

    def value(name: str) -> int:
        return int(overrides.get(name, TOPIC_CONFIGS[name].default))

    min_lag, max_lag = value("min.compaction.lag.ms"), value("max.compaction.lag.ms")
    if min_lag > max_lag:
        raise InvalidConfig(
            f"conflict topic config setting min.compaction.lag.ms ({min_lag}) > "
            f"max.compaction.lag.ms ({max_lag})"
        )
    return dict(overrides)


#: DescribeConfigs sources a topic config can have.
SOURCE_TOPIC, SOURCE_DYNAMIC_BROKER, SOURCE_DYNAMIC_DEFAULT_BROKER = 1, 2, 3
SOURCE_STATIC_BROKER, SOURCE_DEFAULT = 4, 5
#: (name, value, source), most specific first, as DescribeConfigs lists synonyms.
Synonym = tuple[str, str | None, int]


@dataclass(frozen=True, slots=True)
class DescribedConfig:
    name: str
    value: str
    source: int
    kind: str
    synonyms: tuple[Synonym, ...]
    documentation: str | None = None


def describe_topic_configs(
    overrides: Mapping[str, str],
    broker_synonyms: Mapping[str, tuple[Synonym, ...]],
    default_of: Callable[[str], str] = lambda name: TOPIC_CONFIGS[name].default,
) -> list[DescribedConfig]:
    """Every topic config as Kafka's DescribeConfigs shows it: the topic's own value,
    else one set on the broker, else the default; its synonyms are the topic's value
    and then the broker config's (those with a value), as Kafka lists them.

    `broker_synonyms` maps a broker config name to its synonyms on this broker;
    `default_of` gives a config's value when neither the topic nor a listed broker
    level sets it.
    """
    described = []
    for key, definition in sorted(TOPIC_CONFIGS.items()):
        below = tuple(
            s for s in broker_synonyms.get(BROKER_SYNONYMS.get(key, ""), ()) if s[1] is not None
        )
        if key in overrides:
            value, source = overrides[key], SOURCE_TOPIC
            synonyms: tuple[Synonym, ...] = ((key, value, SOURCE_TOPIC), *below)
        elif below and below[0][2] in (
            SOURCE_DYNAMIC_BROKER,
            SOURCE_DYNAMIC_DEFAULT_BROKER,
            SOURCE_STATIC_BROKER,
        ):
            value, source, synonyms = str(below[0][1]), below[0][2], below
        else:
            # What the topic runs with, though no synonym may show where it comes
            # from (Kafka lists none for retention.ms set by log.retention.hours).
            value, source, synonyms = default_of(key), SOURCE_DEFAULT, below
        described.append(DescribedConfig(key, value, source, definition.kind, synonyms))
    return described
