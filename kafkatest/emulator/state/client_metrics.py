"""Client metrics subscriptions (KIP-714, ConfigResource type CLIENT_METRICS):
``kafka-configs --entity-type client-metrics`` and ``kafka-client-metrics``.

A subscription is a named set of three configs: the metric name prefixes to push,
the push interval, and which clients it matches. Kafka keeps them as configs and
pushes telemetry to a reporter plugin; the emulator keeps and describes them, with
Kafka 4.1's checks and words (captured on the `kafka` backend), and runs no
telemetry (GetTelemetrySubscriptions is not served, as on a Kafka broker without a
metrics reporter that supports it).
"""

from __future__ import annotations

import re

from kafkatest.emulator.state.errors import InvalidConfig, InvalidRequest
from kafkatest.emulator.state.topic_configs import ConfigDefinition

INTERVAL_MS = "interval.ms"
MATCH = "match"
METRICS = "metrics"


CLIENT_METRICS_CONFIGS: dict[str, ConfigDefinition] = {
    c.name: c
    for c in (
        ConfigDefinition(
            INTERVAL_MS, "300000", "INT", documentation="Metrics push interval in milliseconds"
        ),
        ConfigDefinition(MATCH, "", "LIST", documentation="Client match criteria"),
        ConfigDefinition(METRICS, "", "LIST", documentation="Telemetry metric name prefix list"),
    )
}

_MIN_INTERVAL_MS, _MAX_INTERVAL_MS = 100, 3_600_000
#: What a match entry may select on (ClientMetricsConfigs.ALLOWED_MATCH_PARAMS).
_MATCH_KEYS = frozenset(
    {
        "client_instance_id",
        "client_id",
        "client_software_name",
        "client_software_version",
        "client_source_address",
        "client_source_port",
    }
)


def validate_name(name: str) -> None:
    if name not in CLIENT_METRICS_CONFIGS:
        raise InvalidRequest(f"Unknown client metrics configuration: {name}")


def validate(name: str, value: str | None) -> str:
    """`value` for config `name` of a subscription, or Kafka's refusal."""
    validate_name(name)
    if value is None:
        raise InvalidRequest(f"Null value not supported for : {name}")
    if name == INTERVAL_MS:
        try:
            interval = int(value.strip())
        except ValueError:
            raise InvalidConfig(
                f"Invalid value {value} for configuration {name}: Not a number of type INT"
            ) from None
        if not _MIN_INTERVAL_MS <= interval <= _MAX_INTERVAL_MS:
            raise InvalidRequest(
                f"Invalid value {interval} for interval.ms, interval must be between "
                f"{_MIN_INTERVAL_MS} and {_MAX_INTERVAL_MS} (1 hour)"
            )
        return str(interval)
    if name == MATCH:
        for entry in (e.strip() for e in value.split(",") if e.strip()):
            if not _valid_match(entry):
                raise InvalidConfig(f"Illegal client matching pattern: {entry}")
    return value


def _valid_match(entry: str) -> bool:
    key, equals, pattern = entry.partition("=")
    if not equals or key.strip() not in _MATCH_KEYS:
        return False
    try:
        re.compile(pattern.strip())
    except re.error:
        return False
    return True


def check_name(subscription: str) -> None:
    if not subscription:
        raise InvalidRequest("Subscription name can't be empty")
