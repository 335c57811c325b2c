"""DescribeConfigs, IncrementalAlterConfigs and (legacy) AlterConfigs.

Topic configs are fully supported, and group configs (`state.group_configs`) through
DescribeConfigs and IncrementalAlterConfigs. Broker configs are read-only and
described as Kafka 4.1 describes its broker's (`state.broker_configs`): every key,
with sources, synonyms and documentation when asked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.responses import NO_THROTTLE, error_code_of, make, response_types
from kafkatest.emulator.state import group_configs
from kafkatest.emulator.state.broker_configs import (
    BrokerConfig,
    broker_configs,
    cluster_default_configs,
    kafka_settings,
)
from kafkatest.emulator.state.errors import InvalidConfig, InvalidRequest, StateError
from kafkatest.emulator.state.topic_configs import (
    TOPIC_CONFIGS,
    DescribedConfig,
    Synonym,
    check_topic_configs,
    describe_topic_configs,
    validate_topic_config,
)

TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4
GROUP_RESOURCE = 32
_SOURCE_GROUP = 8

_SOURCE_DEFAULT = 5
_CONFIG_TYPES = {"BOOLEAN": 1, "STRING": 2, "INT": 3, "LONG": 5, "DOUBLE": 6, "LIST": 7}

_SET, _DELETE, _APPEND, _SUBTRACT = 0, 1, 2, 3


@handles(32, 1, 4)
async def describe_configs(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    results = []
    for resource in request.resources:
        if resource.resource_type == BROKER_RESOURCE:
            results.append(_describe_broker(ctx, types, request, resource))
            continue
        try:
            entries = _describe(ctx, resource.resource_type, resource.resource_name)
            code, message = ErrorCode.none, ""  # Kafka's text where it succeeded
        except StateError as exc:
            entries, code, message = [], error_code_of(exc), str(exc)
        keys = resource.configuration_keys
        configs = tuple(
            make(
                types.DescribeConfigsResourceResult,
                name=entry.name,
                value=entry.value,
                read_only=False,
                config_source=entry.source,
                is_default=entry.source == _SOURCE_DEFAULT,
                is_sensitive=False,
                synonyms=tuple(
                    make(types.DescribeConfigsSynonym, name=n, value=v, source=source)
                    for n, v, source in entry.synonyms
                )
                if request.include_synonyms
                else (),
                config_type=_CONFIG_TYPES.get(entry.kind, 2),
                documentation=None,
            )
            for entry in entries
            if keys is None or entry.name in keys
        )
        results.append(
            make(
                types.DescribeConfigsResult,
                error_code=code,
                error_message=message,
                resource_type=resource.resource_type,
                resource_name=resource.resource_name,
                configs=configs,
            )
        )
    return make(types.DescribeConfigsResponse, throttle_time=NO_THROTTLE, results=tuple(results))


def _describe(ctx: RequestContext, resource_type: int, name: str) -> list[DescribedConfig]:
    """Every config of the resource, with its source and synonyms."""
    state = ctx.state
    if resource_type == GROUP_RESOURCE:
        broker = _broker_values(ctx)
        overrides = state.group_configs.overrides(name)
        described = []
        for key, config in sorted(group_configs.GROUP_CONFIGS.items()):
            # Kafka lists one synonym: the group's own value, else the default.
            if key in overrides:
                value, source = overrides[key], _SOURCE_GROUP
            else:
                value, source = group_configs.default_of(config, broker), _SOURCE_DEFAULT
            synonyms: tuple[Synonym, ...] = ((key, value, source),)
            described.append(DescribedConfig(key, value, source, config.kind, synonyms))
        return described
    if resource_type == TOPIC_RESOURCE:
        topic = state.topics.get(name)
        entries = broker_configs(state.cluster, ctx.broker_id, kafka_settings(state.settings))
        return describe_topic_configs(
            topic.overrides, {entry.name: entry.synonyms for entry in entries}
        )
    raise InvalidRequest(f"unsupported resource type {resource_type}")


def _broker_values(ctx: RequestContext) -> dict[str, str]:
    state = ctx.state
    entries = broker_configs(state.cluster, ctx.broker_id, kafka_settings(state.settings))
    return {entry.name: entry.value for entry in entries if entry.value is not None}


def _describe_broker(ctx: RequestContext, types: Any, request: Any, resource: Any) -> Any:
    """A broker's configs: its own id names them all, "" the cluster-wide defaults;
    another id is refused, as Kafka refuses it (the request went to the wrong broker)."""
    name = resource.resource_name
    code, message = ErrorCode.none, ""
    entries: list[BrokerConfig] = []
    if name == "":
        entries = cluster_default_configs()
    elif name == str(ctx.broker_id):
        state = ctx.state
        entries = broker_configs(state.cluster, ctx.broker_id, kafka_settings(state.settings))
    else:
        code = ErrorCode.invalid_request
        message = (
            f"Unexpected broker id, expected {ctx.broker_id} or empty string, but received {name}"
        )
    keys = resource.configuration_keys
    configs = tuple(
        make(
            types.DescribeConfigsResourceResult,
            name=entry.name,
            value=entry.value,
            read_only=entry.read_only,
            config_source=entry.source,
            is_default=entry.source == _SOURCE_DEFAULT,
            is_sensitive=entry.sensitive,
            synonyms=tuple(
                make(types.DescribeConfigsSynonym, name=n, value=v, source=source)
                for n, v, source in entry.synonyms
            )
            if getattr(request, "include_synonyms", False)
            else (),
            config_type=entry.type,
            documentation=entry.documentation
            if getattr(request, "include_documentation", False)
            else None,
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


@handles(44, 0, 1)
async def incremental_alter_configs(ctx: RequestContext, request: Any) -> Any:
    """Set, delete, append or subtract single configs; the others stay."""

    def updated(current: dict[str, str], resource: Any) -> dict[str, str]:
        out = dict(current)
        for change in resource.configs:
            _apply(out, change.name, change.config_operation, change.value)
        return out

    responses = tuple(
        _alter_group(ctx, resource, request.validate_only)
        if resource.resource_type == GROUP_RESOURCE
        else _alter_topic(ctx, resource, updated, request.validate_only)
        for resource in request.resources
    )
    return make(
        response_types(ctx).IncrementalAlterConfigsResponse,
        throttle_time=NO_THROTTLE,
        responses=responses,
    )


@handles(33, 0, 2)
async def alter_configs(ctx: RequestContext, request: Any) -> Any:
    """The legacy form replaces every override of the resource."""

    def updated(_current: dict[str, str], resource: Any) -> dict[str, str]:
        return {c.name: validate_topic_config(c.name, c.value) for c in resource.configs}

    responses = tuple(
        _alter_topic(ctx, resource, updated, request.validate_only)
        for resource in request.resources
    )
    return make(
        response_types(ctx).AlterConfigsResponse, throttle_time=NO_THROTTLE, responses=responses
    )


def _alter_group(ctx: RequestContext, resource: Any, validate_only: bool) -> Any:
    """One group's configs: every change checked (`state.group_configs`), all or none kept."""
    store = ctx.state.group_configs
    try:
        broker = _broker_values(ctx)
        overrides = store.overrides(resource.resource_name)
        for change in resource.configs:
            if change.config_operation == _SET:
                overrides[change.name] = group_configs.validate(change.name, change.value, broker)
            elif change.config_operation == _DELETE:
                group_configs.validate_name(change.name)
                overrides.pop(change.name, None)
            else:
                raise InvalidConfig(
                    f"Config {change.name} is not a list; cannot append or subtract"
                )
        if not validate_only:
            store.replace(resource.resource_name, overrides)
        code, message = ErrorCode.none, None
    except StateError as exc:
        code, message = error_code_of(exc), str(exc)
    return _alter_result(response_types(ctx), resource, code, message)


def _alter_topic(
    ctx: RequestContext,
    resource: Any,
    updated: Callable[[dict[str, str], Any], dict[str, str]],
    validate_only: bool,
) -> Any:
    """Both alter APIs: compute the resource's new overrides and keep them unless
    validate_only; each resource is answered on its own (one bad config fails only it)."""
    try:
        _check_topic_resource(resource)
        topic = ctx.state.topics.get(resource.resource_name)
        overrides = check_topic_configs(updated(dict(topic.overrides), resource))
        if not validate_only:
            topic.overrides = overrides
        code, message = ErrorCode.none, None
    except StateError as exc:
        code, message = error_code_of(exc), str(exc)
    return _alter_result(response_types(ctx), resource, code, message)


def _check_topic_resource(resource: Any) -> None:
    if resource.resource_type != TOPIC_RESOURCE:
        raise InvalidRequest(
            f"only topic configs can be altered (resource type {resource.resource_type})"
        )


def _apply(overrides: dict[str, str], name: str, operation: int, value: str | None) -> None:
    if operation == _SET:
        overrides[name] = validate_topic_config(name, value)
    elif operation == _DELETE:
        if name not in TOPIC_CONFIGS:
            raise InvalidConfig(f"Unknown topic config name: {name}")
        overrides.pop(name, None)
    elif operation in (_APPEND, _SUBTRACT):
        definition = TOPIC_CONFIGS.get(name)
        if definition is None or definition.kind != "LIST":
            raise InvalidConfig(f"Config {name} is not a list; cannot append or subtract")
        current = [v for v in overrides.get(name, definition.default).split(",") if v]
        items = [v.strip() for v in (value or "").split(",") if v.strip()]
        if operation == _APPEND:
            current += [v for v in items if v not in current]
        else:
            current = [v for v in current if v not in items]
        overrides[name] = validate_topic_config(name, ",".join(current))
    else:
        raise InvalidRequest(f"unknown config operation {operation}")


def _alter_result(types: Any, resource: Any, code: ErrorCode, message: str | None) -> Any:
    return make(
        types.AlterConfigsResourceResponse,
        error_code=code,
        error_message=message,
        resource_type=resource.resource_type,
        resource_name=resource.resource_name,
    )


# -- ListConfigResources (KIP-1142) ---------------------------------------------------

#: ConfigResource types ListConfigResources v1 lists, in the order they are listed.
TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
_LISTABLE = (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP)


@handles(74, 0, 1)
async def list_config_resources(ctx: RequestContext, request: Any) -> Any:
    """What `kafka-configs --describe` without a name lists first: every topic (internal
    ones too), every broker and its logger, and the groups with configs set. v0 (once
    ListClientMetricsResources) asks for client metrics only; the emulator keeps none.
    A type outside those is answered UNSUPPORTED_VERSION with nothing listed, as Kafka."""
    types = response_types(ctx)
    wanted = (CLIENT_METRICS,) if ctx.api_version == 0 else tuple(request.resource_types)
    if any(kind not in _LISTABLE for kind in wanted):
        return make(
            types.ListConfigResourcesResponse,
            throttle_time=NO_THROTTLE,
            error_code=ErrorCode.unsupported_version,
            config_resources=(),
        )
    state = ctx.state
    brokers = [str(broker_id) for broker_id in state.cluster.broker_ids]
    names: dict[int, list[str]] = {
        TOPIC: sorted(topic.name for topic in state.topics),
        BROKER: brokers,
        BROKER_LOGGER: brokers,
        CLIENT_METRICS: [],
        GROUP: state.group_configs.configured_groups(),
    }
    listed = tuple(
        make(types.ConfigResource, resource_name=name, resource_type=kind)
        for kind in _LISTABLE
        if not wanted or kind in wanted
        for name in names[kind]
    )
    return make(
        types.ListConfigResourcesResponse,
        throttle_time=NO_THROTTLE,
        error_code=ErrorCode.none,
        config_resources=listed,
    )
