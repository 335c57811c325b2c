"""The sans-IO codec on its own: frames, headers, messages, batches, codecs."""

from __future__ import annotations

import io
import struct

import cramjam
import pytest
from batch_builder import build_batch
from crc32c import crc32c
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.serial import entity_writer

from kafkatest.emulator.protocol.batches import (
    CRC_START,
    BatchError,
    place,
    read_header,
    split_batches,
    validate,
)
from kafkatest.emulator.protocol.compression import GZIP, LZ4, SNAPPY, ZSTD, decompress
from kafkatest.emulator.protocol.framing import FrameDecoder, FrameError, frame
from kafkatest.emulator.protocol.headers import parse_request_header, response_header
from kafkatest.emulator.protocol.messages import decode_request
from kafkatest.emulator.protocol.record_timestamps import record_timestamps


def test_frames_are_reassembled_from_any_chunking() -> None:
    stream = frame(b"first") + frame(b"") + frame(b"x" * 1000)
    decoder = FrameDecoder()
    frames: list[bytes] = []
    for i in range(0, len(stream), 7):
        frames += decoder.feed(stream[i : i + 7])
    assert frames == [b"first", b"", b"x" * 1000]
    assert decoder.pending_bytes == 0


def test_oversized_and_negative_frames_are_refused_before_buffering() -> None:
    with pytest.raises(FrameError, match="exceeds the limit"):
        FrameDecoder(max_frame_bytes=100).feed(struct.pack(">i", 101))
    with pytest.raises(FrameError, match="negative"):
        FrameDecoder().feed(struct.pack(">i", -5))


def test_request_header_v2_skips_tagged_fields_and_keeps_legacy_client_id() -> None:
    raw = struct.pack(">hhih", 3, 12, 42, 3) + b"cli" + bytes([1, 7, 2]) + b"zz" + b"BODY"
    header = parse_request_header(raw, flexible=True)
    assert (header.api_key, header.api_version, header.correlation_id) == (3, 12, 42)
    assert header.client_id == "cli"
    assert raw[header.body_offset :] == b"BODY"


def test_response_headers() -> None:
    assert response_header(7, flexible=False) == struct.pack(">i", 7)
    assert response_header(7, flexible=True) == struct.pack(">i", 7) + b"\0"


def _metadata_request_bytes() -> bytes:
    request = MetadataRequest(
        topics=(MetadataRequestTopic(name="t", topic_id=None),),
        allow_auto_topic_creation=True,
        include_topic_authorized_operations=False,
    )
    buffer = io.BytesIO()
    entity_writer(MetadataRequest)(buffer, request)
    return buffer.getvalue()


def test_unknown_tagged_fields_are_skipped_at_every_level() -> None:
    raw = _metadata_request_bytes()
    nested_tags_at = raw.index(b"\x02t") + 2  # the topic entry's empty tag section
    with_nested = raw[:nested_tags_at] + bytes([1, 9, 1]) + b"x" + raw[nested_tags_at + 1 :]
    with_top = raw[:-1] + bytes([1, 5, 2]) + b"ab"
    for variant in (with_nested, with_top):
        decoded = decode_request(MetadataRequest, variant, 0)
        assert decoded.topics[0].name == "t"
        assert decoded.allow_auto_topic_creation is True


def test_batch_header_crc_and_placement() -> None:
    batch = build_batch([b"a", b"b", b"c"], timestamps=[10, 30, 20])
    [(header, raw)] = split_batches(batch)
    assert (header.record_count, header.max_timestamp, header.base_timestamp) == (3, 30, 10)
    validate(header, raw)
    placed = place(raw, 1234, 0)
    assert read_header(placed).base_offset == 1234
    assert placed[CRC_START:] == raw[CRC_START:], "placement must not touch CRC-covered bytes"
    stamped = place(raw, 5, 0, log_append_time=99)
    stamped_header = read_header(stamped)
    assert stamped_header.uses_log_append_time and stamped_header.max_timestamp == 99
    assert crc32c(stamped[CRC_START:]) == stamped_header.crc


def test_corrupt_and_invalid_batches_are_told_apart() -> None:
    batch = bytearray(build_batch([b"a"]))
    batch[-1] ^= 0xFF
    [(header, raw)] = split_batches(bytes(batch))
    with pytest.raises(BatchError) as corrupt:
        validate(header, raw)
    assert corrupt.value.kind == "corrupt"
    with pytest.raises(BatchError) as truncated:
        split_batches(build_batch([b"a"])[:-3])
    assert truncated.value.kind == "corrupt"
    control = build_batch([b"a"], attributes=0x20)
    [(header, raw)] = split_batches(control)
    with pytest.raises(BatchError) as invalid:
        validate(header, raw)
    assert invalid.value.kind == "invalid"


def _xerial(data: bytes) -> bytes:
    chunk = bytes(cramjam.snappy.compress_raw(data))
    return b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + struct.pack(">i", len(chunk)) + chunk


@pytest.mark.parametrize(
    ("codec", "compress"),
    [
        (GZIP, lambda d: bytes(cramjam.gzip.compress(d))),
        (SNAPPY, lambda d: bytes(cramjam.snappy.compress_raw(d))),
        (SNAPPY, _xerial),
        (LZ4, lambda d: bytes(cramjam.lz4.compress(d))),
        (ZSTD, lambda d: bytes(cramjam.zstd.compress(d))),
    ],
)
def test_every_codec_decompresses_to_record_timestamps(codec: int, compress: object) -> None:
    batch = build_batch(
        [b"x" * 50, b"y", None], timestamps=[100, 300, 200], attributes=codec, compress=compress
    )
    [(header, raw)] = split_batches(batch)
    validate(header, raw)
    assert list(record_timestamps(header, raw)) == [(0, 100), (1, 300), (2, 200)]
    assert decompress(codec, compress(b"hello")) == b"hello"  # type: ignore[operator]
