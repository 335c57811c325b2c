"""What a broker answers about a topic it does not have, over a bare socket, on every backend.

Spark's AdminClient (describeTopics) and its consumers meet these answers when a
subscribed topic is deleted under a query; auto-creation decides whether the topic
comes back behind the job's back. The expected values are Kafka's (KRaft): an
unknown name gets UNKNOWN_TOPIC_OR_PARTITION with the all-zero id, an illegal one
INVALID_TOPIC_EXCEPTION, and a Metadata request that may auto-create still hears
"unknown" while the controller creates the topic for the next request.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any

from kio.index import load_payload_module
from kio.schema.describe_topic_partitions.v0.request import (
    DescribeTopicPartitionsRequest,
    TopicRequest,
)
from kio.schema.errors import ErrorCode
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.serial import entity_reader
from kio.static.constants import EntityType
from raw_client import connect, encode, read_frame, request_frame

from kafkatest import Broker
from kafkatest.brokers.client import wait_until

METADATA, DESCRIBE_TOPIC_PARTITIONS = 3, 75
ILLEGAL = "no/such topic"


def ask(broker: Broker, api_key: int, version: int, request: Any, response_name: str) -> Any:
    with connect(broker.bootstrap_servers) as sock:
        sock.sendall(request_frame(api_key, version, 11, encode(request)))
        reply = read_frame(sock)
    assert reply is not None and struct.unpack(">i", reply[:4])[0] == 11
    types = load_payload_module(api_key, version, EntityType.response)
    response, _ = entity_reader(getattr(types, response_name))(reply, 5)
    return response


def metadata(broker: Broker, names: list[str], allow_create: bool) -> dict[str, Any]:
    request = MetadataRequest(
        topics=tuple(MetadataRequestTopic(name=n, topic_id=None) for n in names),
        allow_auto_topic_creation=allow_create,
        include_topic_authorized_operations=False,
    )
    response = ask(broker, METADATA, 12, request, "MetadataResponse")
    return {t.name: t for t in response.topics}


def shape(topic: Any) -> tuple[Any, ...]:
    return (topic.error_code, topic.topic_id, topic.is_internal, topic.partitions)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_metadata_for_unknown_and_illegal_names_without_auto_creation(
    kafka_broker: Broker,
) -> None:
    missing = unique("kt-missing")
    answers = metadata(kafka_broker, [missing, ILLEGAL], allow_create=False)
    # kio reads Kafka's all-zero topic id as None.
    assert shape(answers[missing]) == (ErrorCode.unknown_topic_or_partition, None, False, ())
    assert shape(answers[ILLEGAL]) == (ErrorCode.invalid_topic_exception, None, False, ())
    assert not kafka_broker.topic_exists(missing), "nothing was created"


def test_describe_topic_partitions_for_unknown_and_illegal_names(kafka_broker: Broker) -> None:
    missing = unique("kt-missing")
    request = DescribeTopicPartitionsRequest(
        topics=(TopicRequest(name=missing), TopicRequest(name=ILLEGAL)),
        response_partition_limit=100,
        cursor=None,
    )
    response = ask(
        kafka_broker, DESCRIBE_TOPIC_PARTITIONS, 0, request, "DescribeTopicPartitionsResponse"
    )
    answers = {t.name: t for t in response.topics}
    assert shape(answers[missing]) == (ErrorCode.unknown_topic_or_partition, None, False, ())
    assert shape(answers[ILLEGAL]) == (ErrorCode.invalid_topic_exception, None, False, ())
    assert not kafka_broker.topic_exists(missing)


def test_auto_creation_answers_unknown_then_the_topic_exists(kafka_broker: Broker) -> None:
    name = unique("kt-auto")
    try:
        first = metadata(kafka_broker, [name, ILLEGAL], allow_create=True)
        assert shape(first[name]) == (ErrorCode.unknown_topic_or_partition, None, False, ())
        assert first[ILLEGAL].error_code == ErrorCode.invalid_topic_exception

        def listed() -> bool:
            topic = metadata(kafka_broker, [name], allow_create=False)[name]
            return topic.error_code == ErrorCode.none and len(topic.partitions) == 1

        wait_until(listed, 10.0, f"auto-created topic {name!r} is listed")
    finally:
        if kafka_broker.topic_exists(name):
            kafka_broker.delete_topic(name)
