"""A Fetch parked at the end of the log: how long it waits, and what cuts it short.

Kafka holds such a fetch for its max_wait whatever follows it on the connection;
the emulator answers it as soon as the client has sent its next request on that
connection (docs/explanation/differences.md), which is what Spark's executor consumers do
after reading their range (a ListOffsets behind the fetch they pipelined).
"""

from __future__ import annotations

import dataclasses
import struct
import time

import pytest
from kio.schema.errors import ErrorCode
from kio.static.primitive import i32
from raw_client import ask, connect, encode, fetch_v12_request, read_frame, request_frame

from kafkatest import Broker, Record

FETCH, API_VERSIONS = 1, 18


#: A max_wait no test waits out: a fetch answered early was not held for it.
PARKED_FOR_EVER_MS = 3_600_000


def parked_fetch(topic: str, max_wait_ms: int, offset: int = 1) -> bytes:
    """A Fetch at `offset` (the log end: nothing to answer with) wanting one byte."""
    request = fetch_v12_request(topic, offset=offset, max_wait_ms=max_wait_ms, min_bytes=1)
    return request_frame(FETCH, 12, 1, encode(request))


def api_versions_frame() -> bytes:
    from kio.schema.api_versions.v3.request import ApiVersionsRequest

    request = ApiVersionsRequest(client_software_name="t", client_software_version="1")
    return request_frame(API_VERSIONS, 3, 2, encode(request))


def correlation(frame: bytes | None) -> int:
    assert frame is not None, "the broker closed the connection"
    return int(struct.unpack_from(">i", frame)[0])


def with_one_record(broker: Broker, kafka_topic) -> str:
    """A topic whose partition leads (its one record written), log end 1."""
    topic = kafka_topic()
    broker.produce([Record.make(topic, "x")])
    return topic


def test_a_lone_fetch_at_the_log_end_waits_its_max_wait(kafka_broker: Broker, kafka_topic) -> None:
    topic = with_one_record(kafka_broker, kafka_topic)
    with connect(kafka_broker.bootstrap_servers) as sock:
        sock.settimeout(10)
        started = time.monotonic()
        sock.sendall(parked_fetch(topic, 400))
        assert correlation(read_frame(sock)) == 1
        assert time.monotonic() - started >= 0.35


@pytest.mark.kafka_backends("emulator")  # Kafka holds the fetch for its max_wait (5 s)
def test_a_parked_fetch_answers_when_the_client_sends_its_next_request(
    kafka_broker: Broker, kafka_topic
) -> None:
    topic = with_one_record(kafka_broker, kafka_topic)
    with connect(kafka_broker.bootstrap_servers) as sock:
        sock.settimeout(10)
        sock.sendall(parked_fetch(topic, PARKED_FOR_EVER_MS))
        time.sleep(0.2)  # parked
        sock.sendall(api_versions_frame())
        # A fetch that waited out its max_wait would time the read out (10 s, against
        # a wait of an hour): no elapsed time is asserted, which load would skew.
        assert correlation(read_frame(sock)) == 1  # still in order: the fetch first
        assert correlation(read_frame(sock)) == 2


@pytest.mark.kafka_backends("emulator")
def test_a_fetch_pipelined_with_its_successor_in_one_write_answers_at_once(
    kafka_broker: Broker, kafka_topic
) -> None:
    topic = with_one_record(kafka_broker, kafka_topic)
    with connect(kafka_broker.bootstrap_servers) as sock:
        sock.settimeout(10)
        sock.sendall(parked_fetch(topic, PARKED_FOR_EVER_MS) + api_versions_frame())
        assert [correlation(read_frame(sock)), correlation(read_frame(sock))] == [1, 2]


def test_a_fetch_naming_no_partition_answers_at_once(kafka_broker: Broker, kafka_topic) -> None:
    """Kafka answers a Fetch with nothing to read at once, whatever its max_wait: a
    consumer closing its fetch session sends one (final epoch, no partitions) and waits
    for the answer up to its close timeout (30 s)."""
    topic = with_one_record(kafka_broker, kafka_topic)
    empty = dataclasses.replace(
        fetch_v12_request(topic, offset=1, max_wait_ms=PARKED_FOR_EVER_MS, min_bytes=1),
        topics=(),
    )
    # A fetch held for its max_wait would time the read out (5 s, against an hour).
    assert ask(kafka_broker.bootstrap_servers, FETCH, 12, empty).error_code == ErrorCode.none
    opening = dataclasses.replace(fetch_v12_request(topic, offset=1), session_epoch=i32(0))
    session_id = ask(kafka_broker.bootstrap_servers, FETCH, 12, opening).session_id
    assert session_id != 0
    closing = dataclasses.replace(empty, session_id=i32(session_id), session_epoch=i32(-1))
    closed = ask(kafka_broker.bootstrap_servers, FETCH, 12, closing)
    assert (closed.error_code, closed.session_id, closed.responses) == (ErrorCode.none, 0, ())
