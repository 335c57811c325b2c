"""Share and streams groups switched off, as the `kafka` backend runs them, on every
backend.

With `share.version` and `streams.version` at 0 (the `kafka` backend formats its
storage so, `kafkatest.brokers.kafka_properties.FEATURES_OFF`: Kafka 4.2+ would turn
them on), Kafka still advertises the share APIs (KIP-932) and the streams group APIs
(KIP-1071), answering the group and fetch ones with UNSUPPORTED_VERSION and the
share-state ones with NOT_COORDINATOR. Each request here carries one group, topic and
partition, at every version the broker advertises; the expected answers are what
Kafka sent (4.1.1, and 4.3.1 the same at its newer versions).
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib
import types
import typing
import uuid
from typing import Any

import pytest
from kio.schema.errors import ErrorCode
from raw_client import ask

from kafkatest import Broker

#: api key -> kio module name.
SWITCHED_OFF_APIS = {
    76: "share_group_heartbeat",
    77: "share_group_describe",
    78: "share_fetch",
    79: "share_acknowledge",
    83: "initialize_share_group_state",
    84: "read_share_group_state",
    85: "write_share_group_state",
    86: "delete_share_group_state",
    87: "read_share_group_state_summary",
    88: "streams_group_heartbeat",
    89: "streams_group_describe",
    90: "describe_share_group_offsets",
    91: "alter_share_group_offsets",
    92: "delete_share_group_offsets",
}
OFF = ErrorCode.unsupported_version
TOPIC_ID = uuid.UUID("8f3ce1a2-5b7d-4e10-9c2f-0a1b2c3d4e5f")


def _neutral(hint: Any) -> Any:
    """A value of `hint`: one element in each collection, "g1", zeros, TOPIC_ID."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        return TOPIC_ID if inner == [uuid.UUID] else None
    if origin is tuple:
        element = typing.get_args(hint)[0]
        if dataclasses.is_dataclass(element):
            return (_build(element),)
        return (_neutral(element),) if issubclass(element, str) else ()
    if hint is uuid.UUID:
        return TOPIC_ID
    if isinstance(hint, type) and issubclass(hint, datetime.timedelta):
        return hint.parse(datetime.timedelta(0)) if hasattr(hint, "parse") else hint(0)
    if hint is str:
        return "g1"
    if isinstance(hint, type) and issubclass(hint, str):
        return hint.parse("g1") if hasattr(hint, "parse") else hint("g1")
    if hint is bool:
        return False
    return hint(0)


def _build(cls: Any) -> Any:
    hints = typing.get_type_hints(cls)
    return cls(**{f.name: _neutral(hints[f.name]) for f in dataclasses.fields(cls)})


def _advertised(broker: Broker, api_key: int) -> range:
    from kio.schema.api_versions.v3.request import ApiVersionsRequest

    request = ApiVersionsRequest(client_software_name="t", client_software_version="1")
    answer = ask(broker.bootstrap_servers, 18, 3, request)
    [(low, high)] = [
        (k.min_version, k.max_version) for k in answer.api_keys if k.api_key == api_key
    ]
    return range(low, high + 1)


def _answers(broker: Broker, api_key: int) -> list[Any]:
    """The broker's answer to the request at each version it advertises."""
    answers = []
    for version in _advertised(broker, api_key):
        module = importlib.import_module(
            f"kio.schema.{SWITCHED_OFF_APIS[api_key]}.v{version}.request"
        )
        request_class = next(
            v
            for v in vars(module).values()
            if isinstance(v, type)
            and v.__name__.endswith("Request")
            and dataclasses.is_dataclass(v)
        )
        answers.append(ask(broker.bootstrap_servers, api_key, version, _build(request_class)))
    return answers


@pytest.mark.parametrize("api_key", [76, 78, 79])
def test_share_group_and_fetch_apis_answer_unsupported_version(
    kafka_broker: Broker, api_key: int
) -> None:
    for response in _answers(kafka_broker, api_key):
        assert (response.error_code, response.error_message) == (OFF, None)
        if api_key == 76:
            assert (response.member_id, response.member_epoch, response.assignment) == (
                None,
                0,
                None,
            )
        else:
            assert (response.responses, response.node_endpoints) == ((), ())


def test_streams_group_heartbeat_answers_unsupported_version(kafka_broker: Broker) -> None:
    for response in _answers(kafka_broker, 88):
        assert (response.error_code, response.error_message) == (OFF, None)
        assert (response.member_id, response.member_epoch, response.status) == ("", 0, ())
        assert (response.active_tasks, response.partitions_by_user_endpoint) == (None, None)


@pytest.mark.parametrize("api_key", [77, 89])
def test_group_describes_answer_unsupported_version_per_group(
    kafka_broker: Broker, api_key: int
) -> None:
    for response in _answers(kafka_broker, api_key):
        (group,) = response.groups
        assert (group.group_id, group.error_code, group.error_message) == ("g1", OFF, None)
        assert (group.group_state, group.group_epoch, group.members) == ("", 0, ())
        assert group.authorized_operations == -(2**31)


def test_share_group_offsets_apis_answer_unsupported_version(kafka_broker: Broker) -> None:
    for answer in _answers(kafka_broker, 90):
        (group,) = answer.groups
        assert (group.group_id, group.topics, group.error_code, group.error_message) == (
            "g1",
            (),
            OFF,
            None,
        )
    for api_key in (91, 92):
        for response in _answers(kafka_broker, api_key):
            assert (response.error_code, response.error_message, response.responses) == (
                OFF,
                "The version of API is not supported.",
                (),
            )


@pytest.mark.parametrize(
    ("api_key", "action"),
    [
        (83, "initialize share group state"),
        (84, "read share group state"),
        (85, "write share group state"),
        (86, "delete share group state"),
        (87, "read share group state summary"),
    ],
)
def test_share_state_apis_answer_not_coordinator_per_partition(
    kafka_broker: Broker, api_key: int, action: str
) -> None:
    for answer in _answers(kafka_broker, api_key):
        (result,) = answer.results
        assert result.topic_id == TOPIC_ID
        (partition,) = result.partitions
        assert (partition.partition, partition.error_code, partition.error_message) == (
            0,
            ErrorCode.not_coordinator,
            f"Unable to {action}: This is not the correct coordinator.",
        )
        if api_key == 87 and answer.__version__ >= 1:  # KIP-1226's count, unknown here
            assert partition.delivery_complete_count == -1
