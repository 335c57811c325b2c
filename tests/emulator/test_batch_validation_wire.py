"""Kafka's LogValidator on append: the records of a batch, not just its header.

Produced over a bare socket with hand-built batches, on every backend. Kafka 4.1
(storage LogValidator.java) walks every record before it appends a batch: a batch
holding fewer or more records than its header counts is INVALID_RECORD; record
timestamps must lie within the topic's message.timestamp.before/after.max.ms
(INVALID_TIMESTAMP naming each record); the stored max timestamp is the largest
record timestamp whatever the producer wrote; a client-set LogAppendTime bit is
refused with a max timestamp of -1 and otherwise cleared, the batch stored as
CreateTime. The emulator once stored a 71-byte batch claiming a million records,
moved its log end by a million, and built a million tuples for a later
offsets-for-times lookup.
"""

from __future__ import annotations

import datetime
import struct
import time
import uuid
from typing import Any

import pytest
from batch_builder import RECENT_MS, build_batch, encode_record
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import OffsetSpec
from crc32c import crc32c
from kio.schema.errors import ErrorCode
from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData
from kio.schema.produce.v9.response import ProduceResponse
from kio.serial import entity_reader
from raw_client import connect, encode, read_frame, request_frame

from kafkatest import Broker
from kafkatest.emulator.protocol.primitives import encode_uvarint
from kafkatest.records import Record

_HEADER_AFTER_CRC = ">hiqqqhii"
_FIELDS = ("attributes", "last_offset_delta", "base_ts", "max_ts", "pid", "epoch", "seq", "count")
LOG_APPEND_TIME_BIT = 0x08


def edit(batch: bytes, **fields: int) -> bytes:
    """`batch` with header fields replaced and its CRC made valid again."""
    data = bytearray(batch)
    values = list(struct.unpack_from(_HEADER_AFTER_CRC, data, 21))
    for name, value in fields.items():
        values[_FIELDS.index(name)] = value
    struct.pack_into(_HEADER_AFTER_CRC, data, 21, *values)
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    return bytes(data)


def produce(broker: Broker, topic: str, batch: bytes) -> Any:
    request = ProduceRequest(
        transactional_id=None,
        acks=-1,
        timeout=datetime.timedelta(seconds=10),
        topic_data=(
            TopicProduceData(
                name=topic, partition_data=(PartitionProduceData(index=0, records=batch),)
            ),
        ),
    )
    deadline = time.monotonic() + 30
    while True:
        with connect(broker.bootstrap_servers) as sock:
            sock.sendall(request_frame(0, 9, 3, encode(request)))
            reply = read_frame(sock)
        assert reply is not None
        answer = entity_reader(ProduceResponse)(reply, 5)[0].responses[0].partition_responses[0]
        # A new topic's leader may not have reached Kafka's own metadata yet: retry,
        # as clients do.
        if answer.error_code is not ErrorCode.not_leader_or_follower:
            return answer
        assert time.monotonic() < deadline, "the partition never got a leader"
        time.sleep(0.1)


def consumed(broker: Broker, topic: str, count: int) -> list[tuple[int, int, int]]:
    """(offset, timestamp type, timestamp) of the first `count` records."""
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "group.id": f"kt-{uuid.uuid4().hex[:6]}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    out: list[tuple[int, int, int]] = []
    deadline = time.monotonic() + 30
    while len(out) < count and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            kind, stamp = message.timestamp()
            out.append((message.offset(), kind, stamp))
    consumer.close()
    return out


def new_topic(broker: Broker, **config: object) -> str:
    topic = f"kt-validate-{uuid.uuid4().hex[:8]}"
    broker.create_topic(topic, partitions=1, config=config or None)
    return topic


def test_a_batch_must_hold_the_records_its_header_counts(kafka_broker: Broker) -> None:
    topic = new_topic(kafka_broker)
    one = build_batch([b"a"])
    two = build_batch([b"a", b"b"])
    for lying in (
        edit(one, count=1_000_000, last_offset_delta=999_999),  # 71 bytes, one record
        edit(one, count=2, last_offset_delta=1),
        edit(two, count=1, last_offset_delta=0),
        edit(two, last_offset_delta=5),
    ):
        answer = produce(kafka_broker, topic, lying)
        assert (answer.error_code, answer.base_offset) == (ErrorCode.invalid_record, -1)
    assert kafka_broker.latest_offsets(topic) == {0: 0}
    kafka_broker.produce([Record.make(topic, "after")])
    assert [r.value for r in kafka_broker.consume(topic)] == [b"after"]


def test_a_client_set_log_append_time_bit_is_cleared_or_refused(kafka_broker: Broker) -> None:
    topic = new_topic(kafka_broker)
    two = build_batch([b"a", b"b"], timestamps=[RECENT_MS, RECENT_MS + 5])
    stored = produce(kafka_broker, topic, edit(two, attributes=LOG_APPEND_TIME_BIT))
    assert (stored.error_code, stored.base_offset) == (ErrorCode.none, 0)
    # Stored as CreateTime (type 1): each record keeps its own timestamp.
    assert consumed(kafka_broker, topic, 2) == [(0, 1, RECENT_MS), (1, 1, RECENT_MS + 5)]

    refused = produce(kafka_broker, topic, edit(two, attributes=LOG_APPEND_TIME_BIT, max_ts=-1))
    assert refused.error_code is ErrorCode.invalid_timestamp
    assert (
        refused.error_message == "One or more records have been rejected due to invalid timestamp"
    )
    assert [(e.batch_index, e.batch_index_error_message) for e in refused.record_errors] == [
        (
            index,
            f"Invalid timestamp type in message DefaultRecord(offset={index}, timestamp=-1, "
            f"key=2 bytes, value=1 bytes). Producer should not set timestamp type to "
            "LogAppendTime.",
        )
        for index in (0, 1)
    ]
    assert kafka_broker.latest_offsets(topic) == {0: 2}


def test_the_stored_max_timestamp_is_the_largest_record_timestamp(kafka_broker: Broker) -> None:
    topic = new_topic(kafka_broker)
    two = build_batch([b"a", b"b"], timestamps=[RECENT_MS, RECENT_MS + 5])
    assert produce(kafka_broker, topic, edit(two, max_ts=RECENT_MS + 999)).error_code is (
        ErrorCode.none
    )
    admin = kafka_broker.admin()
    wanted = {TopicPartition(topic, 0): OffsetSpec.max_timestamp()}
    answer = admin.list_offsets(wanted)[TopicPartition(topic, 0)].result(30)
    assert (answer.offset, answer.timestamp) == (1, RECENT_MS + 5)


def test_record_timestamps_beyond_the_topics_limits_are_refused(kafka_broker: Broker) -> None:
    topic = new_topic(kafka_broker, **{"message.timestamp.after.max.ms": 3_600_000})
    future = int(time.time() * 1000) + 2 * 3_600_000
    batch = build_batch([b"now", b"later"], timestamps=[RECENT_MS, future])
    refused = produce(kafka_broker, topic, batch)
    assert refused.error_code is ErrorCode.invalid_timestamp
    assert [e.batch_index for e in refused.record_errors] == [1]
    message = refused.record_errors[0].batch_index_error_message
    assert message.startswith(f"Timestamp {future} of message with offset 1 is out of range.")
    assert kafka_broker.latest_offsets(topic) == {0: 0}
    assert produce(kafka_broker, topic, build_batch([b"ok"])).error_code is ErrorCode.none


def zstd_frame(*parts: bytes | int) -> bytes:
    """A zstd frame of `parts`, bytes stored as they are and ints as that many zeros
    from a few bytes per 128 KiB (run-length blocks): a test can send a decompression
    bomb without making one."""
    block = 128 * 1024
    blocks: list[tuple[int, bytes | int]] = []
    for part in parts:
        if isinstance(part, bytes):
            blocks += [(0, part[i : i + block]) for i in range(0, len(part), block)]
        else:
            blocks += [(1, min(block, part - i)) for i in range(0, part, block)]
    frame = bytearray(struct.pack("<I", 0xFD2FB528))
    frame += bytes([0x00, (17 - 10) << 3])  # no content size; a 128 KiB window
    for index, (kind, content) in enumerate(blocks):
        last = 1 if index == len(blocks) - 1 else 0
        size = len(content) if isinstance(content, bytes) else content
        frame += (last | kind << 1 | size << 3).to_bytes(3, "little")
        frame += content if isinstance(content, bytes) else b"\x00"
    return bytes(frame)


def zstd_of_zeros(size: int) -> bytes:
    return zstd_frame(size)


def one_record_of_zeros(value_size: int, timestamp_delta: int = 0) -> tuple[bytes | int, ...]:
    """The parts of a valid record whose value is `value_size` zeros (and no headers,
    whose count, 0, is one zero more)."""
    head = b"\x00" + _zigzag(timestamp_delta) + b"\x00" + _zigzag(-1) + _zigzag(value_size)
    return _zigzag(len(head) + value_size + 1) + head, value_size + 1


def _zigzag(value: int) -> bytes:
    return encode_uvarint((value << 1) ^ (value >> 63))


MIB_300 = 300 << 20
ZSTD = 4
#: 9.7 KB Produce requests that inflate to 300 MiB, and what Kafka 4.1 answers each:
#: it reads records from the stream one by one and stops at the first wrong one (a
#: record of length 0; a byte after the last declared record), and skips a valid
#: record's 300 MiB value without holding it.
BOMBS = {
    "zeros": ((MIB_300,), ErrorCode.invalid_record, 0),
    "a record, then zeros": (
        (encode_record(0, 0, None, b"x"), MIB_300),
        ErrorCode.invalid_record,
        0,
    ),
    "one record with a 300 MiB value": (one_record_of_zeros(MIB_300), ErrorCode.none, 1),
}


@pytest.mark.parametrize("shape", list(BOMBS))
def test_a_zstd_bomb_is_answered_as_kafka_answers_it(kafka_broker: Broker, shape: str) -> None:
    parts, error, stored = BOMBS[shape]
    topic = new_topic(kafka_broker)
    bomb = build_batch([b"x"], attributes=ZSTD, compress=lambda _: zstd_frame(*parts))
    assert len(bomb) < 10_000
    answer = produce(kafka_broker, topic, bomb)
    assert answer.error_code is error
    assert kafka_broker.latest_offsets(topic) == {0: stored}


def test_a_bombs_records_are_named_when_their_timestamps_are_refused(
    kafka_broker: Broker,
) -> None:
    """The slow path that names each refused record reads the stream too."""
    topic = new_topic(kafka_broker, **{"message.timestamp.after.max.ms": 3_600_000})
    future = int(time.time() * 1000) + 2 * 3_600_000
    parts = one_record_of_zeros(MIB_300)
    bomb = build_batch(
        [b"x"], base_timestamp=future, attributes=ZSTD, compress=lambda _: zstd_frame(*parts)
    )
    refused = produce(kafka_broker, topic, bomb)
    assert refused.error_code is ErrorCode.invalid_timestamp
    assert [e.batch_index for e in refused.record_errors] == [0]
    message = refused.record_errors[0].batch_index_error_message
    assert message.startswith(f"Timestamp {future} of message with offset 0 is out of range.")
    assert kafka_broker.latest_offsets(topic) == {0: 0}


@pytest.mark.parametrize("inflated", [1 << 20, 1 << 30], ids=["1MiB", "1GiB"])
def test_a_decompression_bomb_is_refused_without_inflating_it(
    kafka_broker: Broker, inflated: int
) -> None:
    """36 KB of zstd that inflate to 1 GiB of zeros, declared as one record: Kafka reads
    records from the stream one at a time and finds the first corrupt, and so does the
    emulator. Both refuse the batch, and the broker serves the next producer."""
    topic = new_topic(kafka_broker)
    bomb = build_batch([b"x"], attributes=ZSTD, compress=lambda _: zstd_of_zeros(inflated))
    assert len(bomb) < 40_000
    answer = produce(kafka_broker, topic, bomb)
    assert (answer.error_code, answer.base_offset) == (ErrorCode.invalid_record, -1)
    assert kafka_broker.latest_offsets(topic) == {0: 0}
    kafka_broker.produce([Record.make(topic, "after")])
    assert [r.value for r in kafka_broker.consume(topic)] == [b"after"]
