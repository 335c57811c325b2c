"""The checks Kafka makes on every resource of IncrementalAlterConfigs and
AlterConfigs before any of its type's own (its broker's `ConfigAdminManager.
preprocess` and its controller's name checks), with Kafka 4.1's words.

A resource that fails one is answered with that error and not changed; the others
of the request go on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from kafkatest.emulator.state.errors import (
    InvalidRequest,
    InvalidTopic,
    StateError,
    UnknownServerError,
)
from kafkatest.emulator.state.topics import detect_invalid_topic

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
#: The legacy AlterConfigs never took log4j levels (KIP-412 came with the incremental one).
_LEGACY_TYPES = frozenset({TOPIC, BROKER, CLIENT_METRICS, GROUP})
_INCREMENTAL_TYPES = _LEGACY_TYPES | {BROKER_LOGGER}
_DELETE = 1
_OPERATIONS = range(4)


def refusals(resources: Sequence[Any], incremental: bool) -> list[StateError | None]:
    """For each resource, Kafka's refusal before its type's own checks, or None."""
    seen = Counter((resource.resource_type, resource.resource_name) for resource in resources)
    return [
        InvalidRequest("Each resource must appear at most once.")
        if seen[(resource.resource_type, resource.resource_name)] > 1
        else _refusal(resource, incremental)
        for resource in resources
    ]


def _refusal(resource: Any, incremental: bool) -> StateError | None:
    names = [change.name for change in resource.configs]
    if len(set(names)) != len(names):
        return InvalidRequest("Error due to duplicate config keys")
    missing = [
        change.name
        for change in resource.configs
        if change.value is None and not (incremental and change.config_operation == _DELETE)
    ]
    if missing:
        return InvalidRequest(f"Null value not supported for : {', '.join(missing)}")
    kind, name = resource.resource_type, resource.resource_name
    if kind not in (_INCREMENTAL_TYPES if incremental else _LEGACY_TYPES):
        return InvalidRequest(f"Unknown resource type {kind}")
    if kind == TOPIC:
        if name == "":
            return InvalidRequest("Default topic resources are not allowed.")
        reason = detect_invalid_topic(name)
        if reason is not None:
            return InvalidTopic(f"Topic name is invalid: {reason}")
    if kind == GROUP and name == "":
        return InvalidRequest("Default group resources are not allowed.")
    if (
        incremental
        and kind in (TOPIC, GROUP, CLIENT_METRICS)
        and any(change.config_operation not in _OPERATIONS for change in resource.configs)
    ):
        return UnknownServerError("")  # Kafka's controller fails on an unknown type
    return None
