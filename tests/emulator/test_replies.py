"""Replies as buffers: byte for byte what kio's own encoder writes, batches not copied."""

from __future__ import annotations

import io
import struct

import pytest
from kio.schema.errors import ErrorCode
from kio.serial import entity_writer
from kio.static.primitive import i32, i64

from kafkatest.emulator.protocol.headers import response_header
from kafkatest.emulator.protocol.messages import encode_response, response_schema
from kafkatest.emulator.protocol.replies import (
    LARGE_PIECE,
    StoredRecords,
    encode_reply,
    reply_bytes,
)
from kafkatest.emulator.server.responses import make

FETCH = 1


def fetch_response(version: int, batches: list[bytes]) -> tuple[object, object]:
    """The same Fetch response with StoredRecords and with the joined bytes."""
    response_type = response_schema(FETCH, version)
    module = __import__(response_type.__module__, fromlist=["*"])

    def build(records: object) -> object:
        partition = make(
            module.PartitionData,
            partition_index=i32(0),
            error_code=ErrorCode.none,
            high_watermark=i64(10),
            last_stable_offset=i64(10),
            log_start_offset=i64(0),
            aborted_transactions=None,
            preferred_read_replica=i32(-1),
            records=records,
        )
        topic = make(
            module.FetchableTopicResponse,
            topic="t",
            topic_id=__import__("uuid").UUID(int=7),
            partitions=(partition,),
        )
        return make(
            response_type,
            throttle_time=__import__("datetime").timedelta(0),
            error_code=ErrorCode.none,
            session_id=i32(0),
            responses=(topic,),
            node_endpoints=(),
        )

    return build(StoredRecords(batches)), build(b"".join(batches))


@pytest.mark.parametrize("version", [4, 11, 12, 13, 16, 17, 18])
def test_a_fetch_reply_is_kio_s_encoding_framed(version: int) -> None:
    batches = [b"a" * 100, b"b" * (LARGE_PIECE * 3), b"c" * 10, b"d" * LARGE_PIECE]
    scattered, joined = fetch_response(version, batches)
    header = response_header(42, flexible=version >= 12)
    buffer = io.BytesIO()
    entity_writer(type(joined))(buffer, joined)
    expected = header + buffer.getvalue()
    reply = encode_reply(header, scattered)
    assert reply_bytes(reply) == struct.pack(">i", len(expected)) + expected
    assert encode_response(scattered) == buffer.getvalue()
    # The large stored batches go out as the very objects the log holds.
    assert any(part is batches[1] for part in reply)
    assert any(part is batches[3] for part in reply)


def test_an_empty_partition_and_a_small_reply_are_one_buffer() -> None:
    scattered, joined = fetch_response(12, [])
    reply = encode_reply(response_header(1, flexible=True), scattered)
    assert len(reply) == 1
    assert reply_bytes(reply)[9:] == encode_response(joined)  # size, correlation id, tags
