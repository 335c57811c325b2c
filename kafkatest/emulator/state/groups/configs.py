"""Group configs (ConfigResource type GROUP): per-group overrides of the broker's
consumer, share and streams group settings, as DescribeConfigs and
IncrementalAlterConfigs see them.

Checked as Kafka 4.1 checks them (held against the `kafka` backend): the ten keys
it knows, each defaulting to its broker setting (source DEFAULT), an override shown
with source GROUP_CONFIG; intervals and timeouts within the broker's min and max
for them; Kafka's words for each refusal. Overrides are kept per group id whether
or not the group exists, as Kafka keeps them in its metadata. A KIP-848 group's
coordinator applies its consumer.* ones (`state.consumer_group_settings`); the share
and streams ones are kept and described only, as those groups are not emulated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from kafkatest.emulator.state.errors import InvalidConfig


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


def _bounded(name: str, family: str, setting: str) -> GroupConfig:
    return GroupConfig(
        name,
        "INT",
        f"group.{family}.{setting}",
        f"group.{family}.min.{setting}",
        f"group.{family}.max.{setting}",
    )


GROUP_CONFIGS: dict[str, GroupConfig] = {
    c.name: c
    for c in (
        _bounded("consumer.heartbeat.interval.ms", "consumer", "heartbeat.interval.ms"),
        _bounded("consumer.session.timeout.ms", "consumer", "session.timeout.ms"),
        GroupConfig("share.auto.offset.reset", "STRING", default="latest"),
        _bounded("share.heartbeat.interval.ms", "share", "heartbeat.interval.ms"),
        GroupConfig(
            "share.isolation.level",
            "STRING",
            choices=("read_committed", "read_uncommitted"),
            default="read_uncommitted",
        ),
        _bounded("share.record.lock.duration.ms", "share", "record.lock.duration.ms"),
        _bounded("share.session.timeout.ms", "share", "session.timeout.ms"),
        _bounded("streams.heartbeat.interval.ms", "streams", "heartbeat.interval.ms"),
        GroupConfig(
            "streams.num.standby.replicas",
            "INT",
            "group.streams.num.standby.replicas",
            upper="group.streams.max.standby.replicas",
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
    if config.lower is not None and number < int(broker[config.lower]):
        raise InvalidConfig(f"{name} must be greater than or equal to {config.lower}")
    if config.upper is not None and number > int(broker[config.upper]):
        raise InvalidConfig(f"{name} must be less than or equal to {config.upper}")
    return str(number)
