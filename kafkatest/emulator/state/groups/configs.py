"""Group configs (ConfigResource type GROUP): per-group overrides of the broker's
consumer, share and streams group settings, as DescribeConfigs and
IncrementalAlterConfigs see them.

Checked as Kafka 4.3 checks them (held against the `kafka` backend): the seventeen
keys it knows, each defaulting to its broker setting (described with that setting's
source and synonyms), an override shown with source GROUP_CONFIG; each key's own floor
(`at_least`), then intervals, timeouts and limits within the broker's min and max for
them; Kafka's words for each refusal. Overrides are kept per group id whether
or not the group exists, as Kafka keeps them in its metadata. A KIP-848 group's
coordinator applies its consumer.* ones (`state.consumer_group_settings`); the share
and streams ones are kept and described only, as those groups are not emulated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from kafkatest.emulator.state.broker_configs import DEFAULT_CONFIG
from kafkatest.emulator.state.errors import InvalidConfig
from kafkatest.emulator.state.topic_configs import DescribedConfig, Synonym


@dataclass(frozen=True)
class GroupConfig:
    name: str
    kind: str  # "INT" or "STRING"
    #: The broker setting that gives the default, or the default itself (`default`).
    broker_default: str = ""
    lower: str | None = None
    upper: str | None = None
    choices: tuple[str, ...] = ()
    default: str = ""
    #: The key's own floor (GroupConfig's ConfigDef), checked before the broker's bounds.
    at_least: int | None = None


def _bounded(name: str, family: str, setting: str, at_least: int = 1) -> GroupConfig:
    return GroupConfig(
        name,
        "INT",
        f"group.{family}.{setting}",
        f"group.{family}.min.{setting}",
        f"group.{family}.max.{setting}",
        at_least=at_least,
    )


GROUP_CONFIGS: dict[str, GroupConfig] = {
    c.name: c
    for c in (
        _bounded("consumer.assignment.interval.ms", "consumer", "assignment.interval.ms", 0),
        _bounded("consumer.heartbeat.interval.ms", "consumer", "heartbeat.interval.ms"),
        _bounded("consumer.session.timeout.ms", "consumer", "session.timeout.ms"),
        _bounded("share.assignment.interval.ms", "share", "assignment.interval.ms", 0),
        GroupConfig("share.auto.offset.reset", "STRING", default="latest"),
        GroupConfig(
            "share.delivery.count.limit",
            "INT",
            "group.share.delivery.count.limit",
            "group.share.min.delivery.count.limit",
            "group.share.max.delivery.count.limit",
            at_least=2,
        ),
        _bounded("share.heartbeat.interval.ms", "share", "heartbeat.interval.ms"),
        GroupConfig(
            "share.isolation.level",
            "STRING",
            choices=("read_committed", "read_uncommitted"),
            default="read_uncommitted",
        ),
        GroupConfig(
            "share.partition.max.record.locks",
            "INT",
            "group.share.partition.max.record.locks",
            "group.share.min.partition.max.record.locks",
            "group.share.max.partition.max.record.locks",
            at_least=100,
        ),
        _bounded("share.record.lock.duration.ms", "share", "record.lock.duration.ms", 1000),
        GroupConfig(
            "share.renew.acknowledge.enable", "BOOLEAN", choices=("true", "false"), default="true"
        ),
        _bounded("share.session.timeout.ms", "share", "session.timeout.ms"),
        _bounded("streams.assignment.interval.ms", "streams", "assignment.interval.ms", 0),
        _bounded("streams.heartbeat.interval.ms", "streams", "heartbeat.interval.ms"),
        GroupConfig(
            "streams.initial.rebalance.delay.ms",
            "INT",
            "group.streams.initial.rebalance.delay.ms",
            at_least=0,
        ),
        GroupConfig(
            "streams.num.standby.replicas",
            "INT",
            "group.streams.num.standby.replicas",
            upper="group.streams.max.standby.replicas",
            at_least=0,
        ),
        _bounded("streams.session.timeout.ms", "streams", "session.timeout.ms"),
    )
}
_BY_DURATION = re.compile(r"by_duration:P(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?")


def default_of(config: GroupConfig, broker: Mapping[str, str]) -> str:
    return config.default or broker[config.broker_default]


def validate_name(name: str) -> GroupConfig:
    config = GROUP_CONFIGS.get(name)
    if config is None:
        raise InvalidConfig(f"Unknown group config name: {name}")
    return config


def validate(name: str, value: str | None, broker: Mapping[str, str]) -> str:
    """`value` for group config `name`, or Kafka's refusal."""
    config = validate_name(name)
    text = "" if value is None else value.strip()
    if config.name == "share.auto.offset.reset":
        if text not in ("earliest", "latest") and not _BY_DURATION.fullmatch(text):
            raise InvalidConfig(
                f"Invalid value {text} for configuration {name}: Invalid value `{text}` for "
                f"configuration {name}. The value must be either 'earliest', 'latest' or of "
                "the format 'by_duration:<PnDTnHnMn.nS>'."
            )
        return text
    if config.kind == "BOOLEAN":
        if text.lower() not in config.choices:
            raise InvalidConfig(
                f"Invalid value {text} for configuration {name}: "
                "Expected value to be either true or false"
            )
        return text.lower()
    if config.choices:
        if text not in config.choices:
            raise InvalidConfig(
                f"Invalid value {text} for configuration {name}: String must be one of: "
                + ", ".join(config.choices)
            )
        return text
    try:
        number = int(text)
    except ValueError:
        raise InvalidConfig(
            f"Invalid value {text} for configuration {name}: Not a number of type INT"
        ) from None
    if config.at_least is not None and number < config.at_least:
        raise InvalidConfig(
            f"Invalid value {number} for configuration {name}: Value must be at least "
            f"{config.at_least}"
        )
    if config.lower is not None and number < int(broker[config.lower]):
        raise InvalidConfig(f"{name} must be greater than or equal to {config.lower}")
    if config.upper is not None and number > int(broker[config.upper]):
        raise InvalidConfig(f"{name} must be less than or equal to {config.upper}")
    return str(number)


#: DescribeConfigs' source of a value set on the group.
GROUP_CONFIG = 8


def describe_group_configs(
    overrides: Mapping[str, str],
    broker_values: Mapping[str, str],
    broker_synonyms: Mapping[str, tuple[Synonym, ...]],
) -> list[DescribedConfig]:
    """Every group config as Kafka 4.3 describes it: the group's own value first, then
    the broker setting that gives the default with that setting's synonyms and source
    (or the key's own default where no broker setting is behind it)."""
    described = []
    for key, config in sorted(GROUP_CONFIGS.items()):
        inherited: tuple[Synonym, ...] = (
            broker_synonyms.get(config.broker_default, ())
            if config.broker_default
            else ((key, config.default, DEFAULT_CONFIG),)
        )
        if key in overrides:
            value, source = overrides[key], GROUP_CONFIG
            synonyms: tuple[Synonym, ...] = ((key, value, source), *inherited)
        else:
            value = default_of(config, broker_values)
            source = inherited[0][2] if inherited else DEFAULT_CONFIG
            synonyms = inherited
        described.append(DescribedConfig(key, value, source, config.kind, synonyms))
    return described
