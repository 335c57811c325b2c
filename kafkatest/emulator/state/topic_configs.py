"""Topic configs: Kafka's names, defaults and types, and their validation.

Only overrides are stored per topic; DescribeConfigs shows every known config
with its default, marking which ones were set.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafkatest.emulator.state.errors import InvalidConfig

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


_DEFINITIONS = [
    ConfigDefinition("cleanup.policy", "delete", "LIST", ("delete", "compact")),
    ConfigDefinition(
        "compression.type",
        "producer",
        "STRING",
        ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
    ),
    ConfigDefinition("delete.retention.ms", "86400000", "LONG", at_least=0),
    ConfigDefinition("file.delete.delay.ms", "60000", "LONG"),
    ConfigDefinition("flush.messages", _MAX_LONG, "LONG"),
    ConfigDefinition("flush.ms", _MAX_LONG, "LONG"),
    ConfigDefinition("index.interval.bytes", "4096", "INT"),
    ConfigDefinition("max.compaction.lag.ms", _MAX_LONG, "LONG", at_least=1),
    ConfigDefinition("max.message.bytes", "1048588", "INT"),
    ConfigDefinition("message.timestamp.after.max.ms", _MAX_LONG, "LONG"),
    ConfigDefinition("message.timestamp.before.max.ms", _MAX_LONG, "LONG"),
    ConfigDefinition(
        "message.timestamp.type", "CreateTime", "STRING", ("CreateTime", "LogAppendTime")
    ),
    ConfigDefinition("min.cleanable.dirty.ratio", "0.5", "DOUBLE", at_least=0, at_most=1),
    ConfigDefinition("min.compaction.lag.ms", "0", "LONG", at_least=0),
    ConfigDefinition("min.insync.replicas", "1", "INT"),
    ConfigDefinition("preallocate", "false", "BOOLEAN"),
    ConfigDefinition("retention.bytes", "-1", "LONG"),
    ConfigDefinition("retention.ms", "604800000", "LONG"),
    ConfigDefinition("segment.bytes", "1073741824", "INT", at_least=1024 * 1024),
    ConfigDefinition("segment.index.bytes", "10485760", "INT"),
    ConfigDefinition("segment.jitter.ms", "0", "LONG", at_least=0),
    ConfigDefinition("segment.ms", "604800000", "LONG", at_least=1),
    ConfigDefinition("unclean.leader.election.enable", "false", "BOOLEAN"),
]

TOPIC_CONFIGS: dict[str, ConfigDefinition] = {d.name: d for d in _DEFINITIONS}

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
            int(value)
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
    if definition.choices:
        parts = [p.strip() for p in value.split(",")] if definition.kind == "LIST" else [value]
        bad = [p for p in parts if p not in definition.choices]
        if bad:
            raise InvalidConfig(
                f"Invalid value {value} for configuration {name}: "
                f"String must be one of: {', '.join(definition.choices)}"
            )
    return value


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
        raise InvalidConfig(f"Invalid value {value} for configuration {definition.name}: {problem}")


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
