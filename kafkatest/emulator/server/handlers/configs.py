"""DescribeConfigs, IncrementalAlterConfigs and (legacy) AlterConfigs.

Topics, groups (`state.group_configs`) and client metrics subscriptions are
described and altered here. Kafka's first checks of every resource of an alter,
before any of its type's own, are in `config_checks.py`; the broker's configs and
loggers in `broker_configs.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.protocol.replies import EncodedItems
from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import config_checks, handles
from kafkatest.emulator.server.handlers.broker_configs import (
    alter_broker,
    alter_loggers,
    describe_broker,
    describe_loggers,
    described_result,
    wanted_keys,
)
from kafkatest.emulator.server.pacing import Pacer
from kafkatest.emulator.server.repeats import Answers, Encoded
from kafkatest.emulator.server.responses import error_code_of, make, respond, response_types
from kafkatest.emulator.state import client_metrics
from kafkatest.emulator.state.broker_configs import BrokerConfig, broker_configs
from kafkatest.emulator.state.errors import (
    InvalidConfig,
    InvalidRequest,
    InvalidTopic,
    StateError,
    UnknownTopicOrPartition,
)
from kafkatest.emulator.state.groups import configs as group_configs
from kafkatest.emulator.state.topic_configs import (
    TOPIC_CONFIGS,
    DescribedConfig,
    Synonym,
    check_topic_configs,
    describe_topic_configs,
    validate_topic_config,
)
from kafkatest.emulator.state.topics import detect_invalid_topic

TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4
BROKER_LOGGER_RESOURCE = 8
CLIENT_METRICS_RESOURCE = 16
GROUP_RESOURCE = 32
_SOURCE_CLIENT_METRICS = 7

_SOURCE_DEFAULT = 5
_CONFIG_TYPES = {"BOOLEAN": 1, "STRING": 2, "INT": 3, "LONG": 5, "DOUBLE": 6, "LIST": 7}

_SET, _DELETE, _APPEND, _SUBTRACT = 0, 1, 2, 3
#: Kafka's answer to a resource type it does not describe (INVALID_REQUEST's own text).
MALFORMED = (
    "This most likely occurs because of a request being malformed by the client library or "
    "the message was sent to an incompatible broker. See the broker logs for more details."
)


@handles(32, 1, 4)
async def describe_configs(ctx: RequestContext, request: Any) -> Any:
    """Every resource named is answered, each naming alike, as Kafka 4.1 answers a
    resource named twice or 10,000 times (its request size limit bounds the work).

    Here each distinct resource (type, name and keys asked) is described and
    encoded once per request and the answer refers to that encoding wherever the
    resource was named, and the loop every client shares is given back between
    resources (`repeats.Answers`): a broker's description is 27 KB and took
    7.5 ms to build, so 10,000 namings once held every other client for over a
    minute.
    """
    types = response_types(ctx)
    broker = _BrokerConfigs(ctx)
    answers: Answers[tuple[int, str, frozenset[str] | None]] = Answers()
    results = await answers.each(
        request.resources,
        lambda r: (r.resource_type, r.resource_name, wanted_keys(r)),
        lambda r: _describe_resource(ctx, types, request, r, broker),
    )
    return respond(types.DescribeConfigsResponse, results=results)


class _BrokerConfigs:
    """The receiving broker's configs, which every topic and group is described from,
    computed once per request (they take milliseconds, a topic's own part far less)."""

    def __init__(self, ctx: RequestContext) -> None:
        self._ctx = ctx

    @cached_property
    def entries(self) -> list[BrokerConfig]:
        return broker_configs(self._ctx.state.broker_configs.layers(self._ctx.broker_id))

    @cached_property
    def synonyms(self) -> dict[str, tuple[Synonym, ...]]:
        return {entry.name: entry.synonyms for entry in self.entries}

    @cached_property
    def values(self) -> dict[str, str]:
        return {entry.name: entry.value for entry in self.entries if entry.value is not None}


def _describe_resource(
    ctx: RequestContext, types: Any, request: Any, resource: Any, broker: _BrokerConfigs
) -> Any:
    """One resource's DescribeConfigsResult, by its type."""
    if resource.resource_type == BROKER_RESOURCE:
        return describe_broker(ctx, types, request, resource)
    if resource.resource_type == BROKER_LOGGER_RESOURCE:
        return describe_loggers(ctx, types, request, resource)
    try:
        entries = _describe(ctx, resource.resource_type, resource.resource_name, broker)
        code, message = ErrorCode.none, ""  # Kafka's text where it succeeded
    except StateError as exc:
        entries, code, message = [], error_code_of(exc), str(exc)
    keys = wanted_keys(resource)
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
            documentation=entry.documentation
            if getattr(request, "include_documentation", False)
            else None,
        )
        for entry in entries
        if keys is None or entry.name in keys
    )
    return described_result(types, resource, code, message, configs)


def _describe(
    ctx: RequestContext, resource_type: int, name: str, broker: _BrokerConfigs
) -> list[DescribedConfig]:
    """Every config of the resource, with its source and synonyms."""
    state = ctx.state
    if resource_type == GROUP_RESOURCE:
        return group_configs.describe_group_configs(
            state.group_configs.configs(name), broker.values, broker.synonyms
        )
    if resource_type == CLIENT_METRICS_RESOURCE:
        client_metrics.check_name(name)
        configs = state.client_metrics.configs(name)
        return [
            DescribedConfig(
                key,
                configs.get(key, config.default),
                _SOURCE_CLIENT_METRICS if key in configs else _SOURCE_DEFAULT,
                config.kind,
                ((key, configs[key], _SOURCE_CLIENT_METRICS),) if key in configs else (),
                config.documentation,
            )
            for key, config in sorted(client_metrics.CLIENT_METRICS_CONFIGS.items())
        ]
    if resource_type == TOPIC_RESOURCE:
        reason = detect_invalid_topic(name)
        if reason is not None:
            raise InvalidTopic(f"Topic name is invalid: {reason}")
        topic = state.topics.find(name)
        if topic is None:
            raise UnknownTopicOrPartition("")  # Kafka describes a missing topic by code only
        return describe_topic_configs(
            topic.overrides,
            broker.synonyms,
            topic.defaults.topic_default,
        )
    raise InvalidRequest(MALFORMED)


@handles(44, 0, 1)
async def incremental_alter_configs(ctx: RequestContext, request: Any) -> Any:
    """Set, delete, append or subtract single configs; the others stay."""

    def updated(current: dict[str, str], resource: Any) -> dict[str, str]:
        out = dict(current)
        for change in resource.configs:
            _apply(out, change.name, change.config_operation, change.value)
        return out

    def alter(resource: Any) -> Any:
        return _alter_one(ctx, resource, request.validate_only, updated, incremental=True)

    responses = await _answered(ctx, request.resources, alter, incremental=True)
    return respond(response_types(ctx).IncrementalAlterConfigsResponse, responses=responses)


@handles(33, 0, 2)
async def alter_configs(ctx: RequestContext, request: Any) -> Any:
    """The legacy form replaces every override of the resource."""

    def updated(_current: dict[str, str], resource: Any) -> dict[str, str]:
        return {c.name: validate_topic_config(c.name, c.value) for c in resource.configs}

    def alter(resource: Any) -> Any:
        return _alter_one(ctx, resource, request.validate_only, updated, incremental=False)

    responses = await _answered(ctx, request.resources, alter, incremental=False)
    return respond(response_types(ctx).AlterConfigsResponse, responses=responses)


def _alter_one(
    ctx: RequestContext,
    resource: Any,
    validate_only: bool,
    updated: Callable[[dict[str, str], Any], dict[str, str]],
    incremental: bool,
) -> Any:
    """One resource of either alter API, by its type; the legacy API (not
    `incremental`) replaces the resource's whole set, and never takes loggers
    (`config_checks` refused those)."""
    kind = resource.resource_type
    if kind in (BROKER_RESOURCE, BROKER_LOGGER_RESOURCE):
        if kind == BROKER_RESOURCE:
            code, message = alter_broker(ctx, resource, validate_only, incremental)
        else:
            code, message = alter_loggers(ctx, resource, validate_only)
        return _alter_result(response_types(ctx), resource, code, message)
    if kind == GROUP_RESOURCE:
        return _alter_group(ctx, resource, validate_only, replace=not incremental)
    if kind == CLIENT_METRICS_RESOURCE:
        return _alter_client_metrics(ctx, resource, validate_only, replace=not incremental)
    return _alter_topic(ctx, resource, updated, validate_only)


async def _answered(
    ctx: RequestContext, resources: Any, alter: Callable[[Any], Any], incremental: bool
) -> EncodedItems:
    """Each resource's answer: Kafka's first refusal (`config_checks`), else `alter`'s;
    one resource after another, the loop given back between them."""
    types = response_types(ctx)
    pacer = Pacer()
    answers = Encoded()
    for resource, refusal in zip(
        resources, config_checks.refusals(resources, incremental), strict=True
    ):
        if refusal is None:
            answers.add(alter(resource))
        else:
            code, message = error_code_of(refusal), str(refusal) or None
            answers.add(_alter_result(types, resource, code, message))
        await pacer.breathe()
    return answers.items()


def _alter_group(ctx: RequestContext, resource: Any, validate_only: bool, replace: bool) -> Any:
    """One group's configs: every change checked (`state.group_configs`), all or none
    kept; the legacy AlterConfigs (`replace`) sets the group's whole set."""
    store = ctx.state.group_configs
    try:
        broker = _BrokerConfigs(ctx).values
        overrides = {} if replace else store.configs(resource.resource_name)
        for change in resource.configs:
            if getattr(change, "config_operation", _SET) == _SET:
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


def _alter_client_metrics(
    ctx: RequestContext, resource: Any, validate_only: bool, replace: bool
) -> Any:
    """One subscription's configs (`state.client_metrics`): all changes or none kept;
    the legacy AlterConfigs (`replace`) sets the whole subscription."""
    store = ctx.state.client_metrics
    name = resource.resource_name
    try:
        client_metrics.check_name(name)
        configs = {} if replace else store.configs(name)
        for change in resource.configs:
            operation = getattr(change, "config_operation", _SET)
            if operation == _SET:
                configs[change.name] = client_metrics.validate(change.name, change.value)
            elif operation == _DELETE:
                client_metrics.validate_name(change.name)
                configs.pop(change.name, None)
            else:
                verb = "APPEND" if operation == _APPEND else "SUBTRACT"
                raise InvalidConfig(
                    f"Can't {verb} to key {change.name} because its type is not LIST."
                )
        if not validate_only:
            store.replace(name, configs)
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
        topic = ctx.state.topics.find(resource.resource_name)
        if topic is None:
            raise UnknownTopicOrPartition(f"The topic '{resource.resource_name}' does not exist.")
        overrides = check_topic_configs(updated(dict(topic.overrides), resource))
        if not validate_only:
            topic.overrides = overrides
        code, message = ErrorCode.none, None
    except StateError as exc:
        code, message = error_code_of(exc), str(exc)
    return _alter_result(response_types(ctx), resource, code, message)


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
    return respond(
        types.AlterConfigsResourceResponse,
        code,
        message,
        resource_type=resource.resource_type,
        resource_name=resource.resource_name,
    )
