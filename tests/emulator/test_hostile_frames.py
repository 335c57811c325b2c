"""Hostile frames cost their own connection and nothing else, on every backend.

Kafka's generated readers refuse a count that cannot fit in the bytes left
("Tried to allocate a collection of size N, but there are only M bytes remaining")
and a null where the schema allows none ("non-nullable field X was serialized as
null"); the request then cannot be parsed and the broker closes that connection.
The emulator must do the same: these frames once aborted its process (kio's
native decoder allocated by the count: `memory allocation of 34359738352 bytes
failed`) or reached handlers as None and raised TypeError.

Each case is a body template with one hole, sent once with the hostile bytes in
the hole (the connection closes, the broker logs one line and no traceback) and
once with harmless bytes (answered), so the test shows the frame is otherwise
well formed. Afterwards another client still produces and consumes.
"""

from __future__ import annotations

import logging
import struct
import uuid

import pytest
from raw_client import connect, read_frame, request_frame

from kafkatest import Broker
from kafkatest.records import Record

#: uvarint 2^31-1: Kafka reads a count of 2^31-2, which no frame can hold.
BIG = bytes.fromhex("ffffffff07")
#: uvarint 2^32-1: Kafka's 32-bit varint wraps it to -1, so it reads a count of -2: null.
WRAPPED = bytes.fromhex("ffffffff0f")
#: uvarint 0: a null compact array or string (or no tagged fields).
NULL = b"\x00"
#: uvarint 1: an empty compact array.
EMPTY = b"\x01"
HOLE = b"%s"

H = bytes.fromhex
METADATA_V12_TAIL = H("010000")  # allow auto-creation, no authorized operations, no tags
PRODUCE_V9_HEAD = H("00ffff00007530") + H("02") + H("0274")  # no txn id, acks -1, 30 s, "t"

#: (api key, version, body with a HOLE, hostile fill, harmless fill): Kafka closes.
OVERSIZED_COUNTS = [
    pytest.param(3, 12, HOLE + METADATA_V12_TAIL, BIG, EMPTY, id="metadata-topics-array"),
    pytest.param(
        3,
        12,
        H("02") + bytes(16) + HOLE + H("00") + METADATA_V12_TAIL,
        BIG,
        NULL,
        id="metadata-topic-name",
    ),
    pytest.param(
        0, 9, PRODUCE_V9_HEAD + HOLE + H("0000"), BIG, EMPTY, id="produce-nested-partition-array"
    ),
    pytest.param(
        0,
        9,
        PRODUCE_V9_HEAD + HOLE + H("0000"),
        WRAPPED,
        EMPTY,
        id="produce-wrapped-count-in-a-non-nullable-array",
    ),
    pytest.param(
        0,
        9,
        PRODUCE_V9_HEAD + H("02") + H("00000000") + HOLE + H("000000"),
        BIG,
        NULL,
        id="produce-records-bytes",
    ),
    pytest.param(
        3, 12, H("010100") + H("01") + H("00") + HOLE, BIG, NULL, id="metadata-tagged-field-size"
    ),
    pytest.param(
        9,
        7,
        H("0267") + H("02") + H("0274") + HOLE + H("00") + H("0000"),
        BIG,
        EMPTY,
        id="offset-fetch-int32-array",
    ),
]

#: (api key, version, body with a HOLE): Kafka reads WRAPPED in the hole as it reads
#: NULL (a count, length or tagged-field count of 0), and answers alike.
WRAPPED_READ_AS_NULL = [
    pytest.param(3, 12, HOLE + METADATA_V12_TAIL, id="metadata-topics-array"),
    pytest.param(3, 12, H("02") + bytes(16) + HOLE + H("00") + METADATA_V12_TAIL, id="topic-name"),
    pytest.param(
        0, 9, PRODUCE_V9_HEAD + H("02") + H("00000000") + HOLE + H("000000"), id="produce-records"
    ),
    pytest.param(3, 12, H("010100") + HOLE, id="metadata-tagged-field-count"),
]

#: Null arrays in fields Kafka declares non-nullable, one per API that once raised
#: TypeError in its handler: (api key, version, body with a HOLE, NULL, EMPTY).
NULL_ARRAYS = [
    pytest.param(2, 7, H("ffffffff00") + HOLE + H("00"), NULL, EMPTY, id="list-offsets"),
    pytest.param(0, 9, H("00ffff00007530") + HOLE + H("00"), NULL, EMPTY, id="produce"),
    pytest.param(37, 2, HOLE + H("000075300000"), NULL, EMPTY, id="create-partitions"),
    pytest.param(19, 5, HOLE + H("000075300000"), NULL, EMPTY, id="create-topics"),
    pytest.param(20, 4, HOLE + H("0000753000"), NULL, EMPTY, id="delete-topics"),
    pytest.param(
        9, 7, H("0267") + H("020274") + HOLE + H("00") + H("0000"), NULL, EMPTY, id="offset-fetch"
    ),
    pytest.param(15, 5, HOLE + H("0000"), NULL, EMPTY, id="describe-groups"),
    pytest.param(16, 4, HOLE + H("00"), NULL, EMPTY, id="list-groups"),
    pytest.param(
        1,
        12,
        H("ffffffff000001f4000000017fffffff0000000000ffffffff") + HOLE + H("010100"),
        NULL,
        EMPTY,
        id="fetch",
    ),
]


def _send(broker: Broker, api_key: int, version: int, body: bytes) -> bytes | None:
    """The reply to one request on a fresh connection, or None if the broker closed it."""
    with connect(broker.bootstrap_servers) as sock:
        sock.sendall(request_frame(api_key, version, 42, body))
        return read_frame(sock)


def _still_produces_and_consumes(broker: Broker) -> None:
    topic = f"kt-after-hostile-{uuid.uuid4().hex[:8]}"
    broker.create_topic(topic, partitions=1)
    broker.produce([Record.make(topic, f"v{i}") for i in range(3)])
    assert [r.value for r in broker.consume(topic)] == [b"v0", b"v1", b"v2"]


@pytest.mark.parametrize(
    ("api_key", "version", "template", "hostile", "harmless"), OVERSIZED_COUNTS + NULL_ARRAYS
)
def test_oversized_counts_and_nulls_where_none_may_be_close_the_connection(
    kafka_broker: Broker,
    caplog: pytest.LogCaptureFixture,
    api_key: int,
    version: int,
    template: bytes,
    hostile: bytes,
    harmless: bytes,
) -> None:
    with caplog.at_level(logging.INFO, logger="kafkatest.emulator"):
        assert _send(kafka_broker, api_key, version, template.replace(HOLE, hostile)) is None, (
            "the broker should close the connection"
        )
        reply = _send(kafka_broker, api_key, version, template.replace(HOLE, harmless))
    assert reply is not None and struct.unpack(">i", reply[:4])[0] == 42
    if kafka_broker.backend == "emulator":
        closing = [r for r in caplog.records if "closing connection" in r.getMessage()]
        assert len(closing) == 1, [r.getMessage() for r in caplog.records]
        assert not any(r.exc_info for r in caplog.records), "no traceback is logged"
    _still_produces_and_consumes(kafka_broker)


@pytest.mark.parametrize(("api_key", "version", "template"), WRAPPED_READ_AS_NULL)
def test_counts_of_2_to_the_31_or_more_are_read_as_kafka_reads_them(
    kafka_broker: Broker, api_key: int, version: int, template: bytes
) -> None:
    wrapped = _send(kafka_broker, api_key, version, template.replace(HOLE, WRAPPED))
    null = _send(kafka_broker, api_key, version, template.replace(HOLE, NULL))
    assert wrapped is not None and wrapped == null
    _still_produces_and_consumes(kafka_broker)


def test_wrapped_tagged_field_count_in_the_request_header_means_no_fields(
    kafka_broker: Broker,
) -> None:
    """Metadata v12 whose header v2 tagged-field section claims 2^32-1 fields."""

    def ask(header_tags: bytes) -> bytes | None:
        payload = struct.pack(">hhih", 3, 12, 42, 4) + b"test" + header_tags + H("01010000")
        with connect(kafka_broker.bootstrap_servers) as sock:
            sock.sendall(struct.pack(">i", len(payload)) + payload)
            return read_frame(sock)

    wrapped = ask(WRAPPED)
    assert wrapped is not None and wrapped == ask(NULL)
    _still_produces_and_consumes(kafka_broker)
