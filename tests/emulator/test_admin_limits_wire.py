"""Kafka's controller limits on one admin request, over a bare socket, on every backend.

Kafka refuses a CreateTopics asking for more than 10,000 partitions in all
(POLICY_VIOLATION "Excessively large number of partitions per request.", for
every topic of the request) and any request that would write more than 10,000
metadata records: a topic is one record, each partition one, each config one
(POLICY_VIOLATION "Unable to perform excessively large batch operation.", even
with validate_only). CreatePartitions adding more than 10,000 partitions fails
with UNKNOWN_SERVER_ERROR and no message. The emulator once built a leader list
of num_partitions entries before any check: a CreateTopics or CreatePartitions
to 2^31-1 hung its event loop while memory grew.

(Kafka 4.1 also adds 10,000 of the partitions before failing a too-large
CreatePartitions, leaving its metadata inconsistent; the emulator adds none.)
"""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from kio.schema.create_partitions.v2 import request as create_partitions
from kio.schema.create_partitions.v2.response import CreatePartitionsResponse
from kio.schema.create_topics.v5 import request as create_topics
from kio.schema.create_topics.v5.response import CreateTopicsResponse
from kio.schema.errors import ErrorCode
from kio.serial import entity_reader
from raw_client import connect, encode, read_frame, request_frame

from kafkatest import Broker
from kafkatest.records import Record

MAX_INT32 = 2**31 - 1
TIMEOUT = datetime.timedelta(seconds=30)


def _ask(broker: Broker, api_key: int, version: int, request: Any, response_type: Any) -> Any:
    with connect(broker.bootstrap_servers) as sock:
        sock.sendall(request_frame(api_key, version, 9, encode(request)))
        reply = read_frame(sock)
    assert reply is not None, "the broker closed the connection"
    return entity_reader(response_type)(reply, 5)[0]  # header v1: id + tagged fields


def _create(
    broker: Broker, topics: list[tuple[str, int, dict[str, str]]], validate_only: bool = False
) -> list[tuple[str, ErrorCode, str | None]]:
    request = create_topics.CreateTopicsRequest(
        topics=tuple(
            create_topics.CreatableTopic(
                name=name,
                num_partitions=partitions,
                replication_factor=-1,
                assignments=(),
                configs=tuple(
                    create_topics.CreatableTopicConfig(name=k, value=v) for k, v in configs.items()
                ),
            )
            for name, partitions, configs in topics
        ),
        timeout=TIMEOUT,
        validate_only=validate_only,
    )
    response = _ask(broker, 19, 5, request, CreateTopicsResponse)
    return [(t.name, t.error_code, t.error_message) for t in response.topics]


def _grow(
    broker: Broker, topic: str, count: int, validate_only: bool
) -> tuple[ErrorCode, str | None]:
    request = create_partitions.CreatePartitionsRequest(
        topics=(
            create_partitions.CreatePartitionsTopic(name=topic, count=count, assignments=None),
        ),
        timeout=TIMEOUT,
        validate_only=validate_only,
    )
    result = _ask(broker, 37, 2, request, CreatePartitionsResponse).results[0]
    return result.error_code, result.error_message


def _name(prefix: str) -> str:
    return f"kt-{prefix}-{uuid.uuid4().hex[:8]}"


def _still_produces_and_consumes(broker: Broker) -> None:
    topic = _name("after")
    broker.create_topic(topic, partitions=1)
    broker.produce([Record.make(topic, f"v{i}") for i in range(3)])
    assert [r.value for r in broker.consume(topic)] == [b"v0", b"v1", b"v2"]


TOO_MANY_PARTITIONS = (
    ErrorCode.policy_violation,
    "Excessively large number of partitions per request.",
)
TOO_MANY_RECORDS = (
    ErrorCode.policy_violation,
    "Unable to perform excessively large batch operation.",
)


def test_create_topics_beyond_the_partition_limit_is_refused_before_anything_is_made(
    kafka_broker: Broker,
) -> None:
    huge, illegal = _name("huge"), "an illegal name"
    assert _create(kafka_broker, [(huge, MAX_INT32, {})]) == [(huge, *TOO_MANY_PARTITIONS)]
    # The request-wide sum is checked first, before names, for every topic at once.
    first = _name("a")
    assert _create(kafka_broker, [(first, 6000, {}), (illegal, 6000, {})]) == [
        (first, *TOO_MANY_PARTITIONS),
        (illegal, *TOO_MANY_PARTITIONS),
    ]
    assert not kafka_broker.topic_exists(huge) and not kafka_broker.topic_exists(first)
    _still_produces_and_consumes(kafka_broker)


def test_create_topics_beyond_the_record_limit_is_refused_even_to_validate(
    kafka_broker: Broker,
) -> None:
    # 1 topic record + 10,000 partition records; 1 + 9,999 + 1 config record.
    big, configured, fits = _name("big"), _name("configured"), _name("fits")
    assert _create(kafka_broker, [(big, 10_000, {})], validate_only=True) == [
        (big, *TOO_MANY_RECORDS)
    ]
    assert _create(kafka_broker, [(configured, 9_999, {"retention.ms": "60000"})]) == [
        (configured, *TOO_MANY_RECORDS)
    ]
    assert _create(kafka_broker, [(fits, 9_999, {})], validate_only=True) == [
        (fits, ErrorCode.none, None)
    ]
    _still_produces_and_consumes(kafka_broker)


def test_create_partitions_beyond_the_record_limit_fails_without_a_message(
    kafka_broker: Broker,
) -> None:
    topic = _name("grow")
    kafka_broker.create_topic(topic, partitions=1)
    for count in (MAX_INT32, 20_001):
        assert _grow(kafka_broker, topic, count, validate_only=True) == (
            ErrorCode.unknown_server_error,
            None,
        )
    if kafka_broker.backend == "emulator":
        # Not sent to Kafka: it adds 10,000 partitions before failing, and its
        # controller then stops giving new topics leaders for the rest of the run.
        assert _grow(kafka_broker, topic, MAX_INT32, validate_only=False) == (
            ErrorCode.unknown_server_error,
            None,
        )
        assert kafka_broker.partition_count(topic) == 1
    _still_produces_and_consumes(kafka_broker)


def test_create_topics_answers_an_internal_config_only_when_it_was_set(
    kafka_broker: Broker,
) -> None:
    """CreateTopics v5 lists the new topic's configs (Kafka's TopicCommandTest reads
    them): `internal.segment.bytes` is among them only when the request set it."""

    def configs_of(topic: str, configs: dict[str, str]) -> dict[str, str | None]:
        request = create_topics.CreateTopicsRequest(
            topics=(
                create_topics.CreatableTopic(
                    name=topic,
                    num_partitions=1,
                    replication_factor=-1,
                    assignments=(),
                    configs=tuple(
                        create_topics.CreatableTopicConfig(name=k, value=v)
                        for k, v in configs.items()
                    ),
                ),
            ),
            timeout=TIMEOUT,
            validate_only=False,
        )
        (result,) = _ask(kafka_broker, 19, 5, request, CreateTopicsResponse).topics
        assert result.error_code == ErrorCode.none, result.error_message
        return {c.name: c.value for c in result.configs}

    internal = configs_of(_name("internal"), {"internal.segment.bytes": "1000"})
    assert internal["internal.segment.bytes"] == "1000"
    assert internal["segment.bytes"] == "1073741824"
    plain = configs_of(_name("plain"), {})
    assert "internal.segment.bytes" not in plain
    assert "cleanup.policy" in plain
