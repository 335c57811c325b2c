"""Produce validation and idempotence over the wire, with hand-built batches."""

from __future__ import annotations

import datetime
import struct
from collections.abc import Callable

from batch_builder import build_batch
from confluent_kafka import Consumer, TopicPartition
from kio.schema.errors import ErrorCode
from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData
from kio.schema.produce.v9.response import ProduceResponse
from kio.serial import entity_reader
from raw_client import connect, encode, read_frame, request_frame

from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.records import Record

_correlation = iter(range(1, 1_000_000))


def _produce(sock: object, topic: str, batch: bytes, acks: int = -1) -> tuple[int, ErrorCode, int]:
    """Send one batch to partition 0; (correlation id, error, base offset) of the reply."""
    request = ProduceRequest(
        transactional_id=None,
        acks=acks,
        timeout=datetime.timedelta(seconds=5),
        topic_data=(
            TopicProduceData(
                name=topic, partition_data=(PartitionProduceData(index=0, records=batch),)
            ),
        ),
    )
    correlation_id = next(_correlation)
    sock.sendall(request_frame(0, 9, correlation_id, encode(request)))  # type: ignore[attr-defined]
    if acks == 0:
        return correlation_id, ErrorCode.none, -1
    reply = read_frame(sock)  # type: ignore[arg-type]
    assert reply is not None
    # Response header v1: correlation id and an empty tagged-field section.
    response, _ = entity_reader(ProduceResponse)(reply, 5)
    partition = response.responses[0].partition_responses[0]
    return struct.unpack(">i", reply[:4])[0], partition.error_code, partition.base_offset


def test_idempotent_retries_are_deduplicated_and_gaps_refused(
    emulator: EmulatorBroker, topic: str
) -> None:
    with connect(emulator.bootstrap_servers) as sock:
        first = build_batch([b"a", b"b"], producer_id=77_000, producer_epoch=0, base_sequence=0)
        second = build_batch([b"c"], producer_id=77_000, producer_epoch=0, base_sequence=2)
        gap = build_batch([b"d"], producer_id=77_000, producer_epoch=0, base_sequence=9)
        bumped = build_batch([b"f"], producer_id=77_000, producer_epoch=1, base_sequence=0)
        old_epoch = build_batch([b"g"], producer_id=77_000, producer_epoch=0, base_sequence=3)
        assert _produce(sock, topic, first)[1:] == (ErrorCode.none, 0)
        assert _produce(sock, topic, second)[1:] == (ErrorCode.none, 2)
        assert _produce(sock, topic, first)[1:] == (ErrorCode.none, 0), "retry gets its offset"
        assert _produce(sock, topic, gap)[1] is ErrorCode.out_of_order_sequence_number
        assert _produce(sock, topic, bumped)[1:] == (ErrorCode.none, 3)
        assert _produce(sock, topic, old_epoch)[1] is ErrorCode.invalid_producer_epoch
    assert emulator.latest_offsets(topic) == {0: 4}


def test_bad_batches_get_kafkas_errors(
    emulator: EmulatorBroker, topic: str, new_topic: Callable[[], str]
) -> None:
    corrupt = bytearray(build_batch([b"x"]))
    corrupt[-1] ^= 1
    transactional = build_batch(
        [b"x"], producer_id=5, producer_epoch=0, base_sequence=0, attributes=0x10
    )
    with connect(emulator.bootstrap_servers) as sock:
        assert _produce(sock, topic, bytes(corrupt))[1] is ErrorCode.corrupt_message
        # A transactional batch in a request without a transactional id (Kafka's check).
        assert _produce(sock, topic, transactional)[1] is (
            ErrorCode.transactional_id_authorization_failed
        )
        assert _produce(sock, topic, build_batch([b"x"])[:30])[1] is ErrorCode.corrupt_message
        two = build_batch([b"x"]) + build_batch([b"y"])
        assert _produce(sock, topic, two)[1] is ErrorCode.invalid_record
        missing = new_topic()
        assert _produce(sock, missing, build_batch([b"x"]))[1] is (
            ErrorCode.unknown_topic_or_partition
        )
    assert emulator.latest_offsets(topic) == {0: 0}


def test_acks_zero_sends_no_reply(emulator: EmulatorBroker, topic: str) -> None:
    with connect(emulator.bootstrap_servers) as sock:
        _produce(sock, topic, build_batch([b"quiet"]), acks=0)
        correlation_id, error, offset = _produce(sock, topic, build_batch([b"loud"]))
    assert error is ErrorCode.none and offset == 1
    assert correlation_id == next(_correlation) - 1, "the first reply belongs to the second request"


def test_long_poll_fetch_wakes_on_produce(emulator: EmulatorBroker, topic: str) -> None:
    consumer = Consumer(
        {
            "bootstrap.servers": emulator.bootstrap_servers,
            "group.id": "assign-only",
            # Far longer than the poll below: only a fetch woken by the produce answers in time.
            "fetch.wait.max.ms": 60000,
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        consumer.poll(0.5)
        emulator.produce([Record.make(topic, "wake", partition=0)])
        msg = consumer.poll(20)
        assert msg is not None, "a waiting fetch must return when data arrives"
        assert msg.error() is None and msg.value() == b"wake"
    finally:
        consumer.close()
