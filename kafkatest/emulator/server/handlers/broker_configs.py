"""The BROKER and BROKER_LOGGER resources of DescribeConfigs, IncrementalAlterConfigs
and AlterConfigs (`configs.py` routes them here): a broker's configs through Kafka's
levels, the dynamic ones changed as Kafka 4.1 changes them
(`state.dynamic_broker_configs`), and its log4j loggers (`state.broker_loggers`).

A resource named "" is the cluster-wide level; one named by an id must name the
broker that answers, as a Kafka broker only describes and checks its own configs.
"""

from __future__ import annotations

import re
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.responses import error_code_of, make, make_from, respond
from kafkatest.emulator.state import broker_config_rules
from kafkatest.emulator.state.broker_configs import (
    DEFAULT_CONFIG,
    BrokerConfig,
    broker_configs,
    cluster_default_configs,
)
from kafkatest.emulator.state.errors import InvalidRequest, StateError

_LOGGER_SOURCE = 6  # DYNAMIC_BROKER_LOGGER_CONFIG


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
    keys = wanted_keys(resource)
    synonyms_asked = getattr(request, "include_synonyms", False)
    documentation_asked = getattr(request, "include_documentation", False)
    configs = tuple(
        make_from(
            types.DescribeConfigsResourceResult,
            entry,
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
    return described_result(types, resource, code, message, configs)


def wanted_keys(resource: Any) -> frozenset[str] | None:
    """The config names a DescribeConfigs resource asks for (None: all of them), as a
    set: the list is the client's, and each config is looked up in it."""
    keys = resource.configuration_keys
    return None if keys is None else frozenset(keys)


def described_result(types: Any, resource: Any, code: ErrorCode, message: str, configs: Any) -> Any:
    """One resource's DescribeConfigsResult, whatever its type."""
    return respond(
        types.DescribeConfigsResult,
        code,
        message,
        resource_type=resource.resource_type,
        resource_name=resource.resource_name,
        configs=configs,
    )


def alter_broker(
    ctx: RequestContext, resource: Any, validate_only: bool, incremental: bool
) -> tuple[ErrorCode, str | None]:
    """One BROKER resource of either alter API: the incremental one changes the
    level's configs key by key, the legacy one replaces them all."""
    try:
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
        store.change(broker_id, props, validate_only, receiver=ctx.broker_id)
    except StateError as exc:
        return error_code_of(exc), str(exc) or None
    return ErrorCode.none, None


def _level(ctx: RequestContext, name: str) -> int | None:
    """None for the cluster-wide level; else the broker's own id, as Kafka checks it."""
    if name == "":
        return None
    broker_id = java_int(name)
    if broker_id is None:
        raise InvalidRequest(f"Node id must be an integer, but it is: {name}")
    if broker_id != ctx.broker_id:
        raise InvalidRequest(f"Unexpected broker id, expected {ctx.broker_id}, but received {name}")
    return broker_id


def describe_loggers(ctx: RequestContext, types: Any, request: Any, resource: Any) -> Any:
    """The broker's loggers and their levels; only the broker itself answers."""
    name = resource.resource_name
    code, message = ErrorCode.none, ""
    levels: list[tuple[str, str]] = []
    if name == "":
        code, message = ErrorCode.invalid_request, "Broker id must not be empty"
    elif not name.lstrip("-").isdigit():
        code, message = (
            ErrorCode.invalid_request,
            f"Broker id must be an integer, but it is: {name}",
        )
    elif int(name) != ctx.broker_id:
        code = ErrorCode.invalid_request
        message = f"Unexpected broker id, expected {ctx.broker_id} but received {name}"
    else:
        levels = ctx.state.loggers.levels()
    keys = wanted_keys(resource)
    documentation_asked = getattr(request, "include_documentation", False)
    configs = tuple(
        make(
            types.DescribeConfigsResourceResult,
            name=logger,
            value=level,
            read_only=False,
            config_source=_LOGGER_SOURCE,
            is_default=False,
            is_sensitive=False,
            synonyms=(),
            config_type=0,
            documentation="" if documentation_asked else None,
        )
        for logger, level in levels
        if keys is None or logger in keys
    )
    return described_result(types, resource, code, message, configs)


def alter_loggers(
    ctx: RequestContext, resource: Any, validate_only: bool
) -> tuple[ErrorCode, str | None]:
    """Log levels set or unset (KIP-412): every change checked, then all applied."""
    loggers = ctx.state.loggers
    try:
        _node(ctx, resource.resource_name)
        for change in resource.configs:
            loggers.check(change.name, change.config_operation, change.value)
        if not validate_only:
            for change in resource.configs:
                loggers.apply(change.name, change.config_operation, change.value)
    except StateError as exc:
        return error_code_of(exc), str(exc) or None
    return ErrorCode.none, None


def _node(ctx: RequestContext, name: str) -> None:
    """Kafka's RuntimeLoggerManager check that the resource names this node."""
    node = java_int(name)
    if node is None:
        raise InvalidRequest(f"Node id must be an integer, but it is: {name}")
    if node != ctx.broker_id:
        raise InvalidRequest(f"Unexpected node id. Expected {ctx.broker_id}, but received {name}")


def java_int(text: str) -> int | None:
    """`text` as Java's Integer.parseInt reads it (a sign, ASCII digits, 32 bits), or None."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if -(2**31) <= value < 2**31 else None
