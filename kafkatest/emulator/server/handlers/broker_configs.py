"""The BROKER resource of DescribeConfigs, IncrementalAlterConfigs and AlterConfigs
(`configs.py` routes it here): a broker's configs through Kafka's levels, and the
dynamic ones changed as Kafka 4.1 changes them (`state.dynamic_broker_configs`).

A resource named "" is the cluster-wide level; one named by an id must name the
broker that answers, as a Kafka broker only describes and checks its own configs.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.responses import error_code_of, make
from kafkatest.emulator.state import broker_config_rules
from kafkatest.emulator.state.broker_configs import (
    DEFAULT_CONFIG,
    BrokerConfig,
    broker_configs,
    cluster_default_configs,
)
from kafkatest.emulator.state.errors import InvalidRequest, StateError

_DELETE = 1


def describe_broker(ctx: RequestContext, types: Any, request: Any, resource: Any) -> Any:
    """A broker's configs: its own id names them all, "" the cluster-wide ones;
    another id is refused, as Kafka refuses it (the request went to the wrong broker)."""
    name = resource.resource_name
    code, message = ErrorCode.none, ""
    entries: list[BrokerConfig] = []
    store = ctx.state.broker_configs
    if name == "":
        entries = cluster_default_configs(store.cluster_default)
    elif name == str(ctx.broker_id):
        entries = broker_configs(store.layers(ctx.broker_id))
    else:
        code = ErrorCode.invalid_request
        message = (
            f"Unexpected broker id, expected {ctx.broker_id} or empty string, but received {name}"
        )
    keys = resource.configuration_keys
    synonyms_asked = getattr(request, "include_synonyms", False)
    documentation_asked = getattr(request, "include_documentation", False)
    configs = tuple(
        make(
            types.DescribeConfigsResourceResult,
            name=entry.name,
            value=entry.value,
            read_only=entry.read_only,
            config_source=entry.source,
            is_default=entry.source == DEFAULT_CONFIG,
            is_sensitive=entry.sensitive,
            synonyms=tuple(
                make(types.DescribeConfigsSynonym, name=n, value=v, source=source)
                for n, v, source in entry.synonyms
            )
            if synonyms_asked
            else (),
            config_type=entry.type,
            documentation=entry.documentation if documentation_asked else None,
        )
        for entry in entries
        if keys is None or entry.name in keys
    )
    return make(
        types.DescribeConfigsResult,
        error_code=code,
        error_message=message,
        resource_type=resource.resource_type,
        resource_name=name,
        configs=configs,
    )


def alter_broker(
    ctx: RequestContext, resource: Any, validate_only: bool, incremental: bool
) -> tuple[ErrorCode, str | None]:
    """One BROKER resource of either alter API: the incremental one changes the
    level's configs key by key, the legacy one replaces them all."""
    try:
        _check_request(resource, incremental)
        broker_id = _level(ctx, resource.resource_name)
        store = ctx.state.broker_configs
        if incremental:
            props = store.level(broker_id)
            for change in resource.configs:
                broker_config_rules.apply_operation(
                    props, change.name, change.config_operation, change.value
                )
        else:
            props = {change.name: change.value for change in resource.configs}
        store.change(broker_id, props, validate_only)
    except StateError as exc:
        return error_code_of(exc), str(exc) or None
    return ErrorCode.none, None


def _level(ctx: RequestContext, name: str) -> int | None:
    """None for the cluster-wide level; else the broker's own id, as Kafka checks it."""
    if name == "":
        return None
    try:
        broker_id = int(name)
    except ValueError:
        raise InvalidRequest(f"Node id must be an integer, but it is: {name}") from None
    if broker_id != ctx.broker_id:
        raise InvalidRequest(f"Unexpected broker id, expected {ctx.broker_id}, but received {name}")
    return broker_id


def _check_request(resource: Any, incremental: bool) -> None:
    """Kafka's first checks of a resource's changes: each key once, and a value for
    every key that is not deleted."""
    names = [change.name for change in resource.configs]
    if len(set(names)) != len(names):
        raise InvalidRequest("Error due to duplicate config keys")
    missing = [
        change.name
        for change in resource.configs
        if change.value is None and not (incremental and change.config_operation == _DELETE)
    ]
    if missing:
        raise InvalidRequest(f"Null value not supported for : {', '.join(missing)}")
