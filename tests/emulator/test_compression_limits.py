"""Batch bodies inflate into bounded buffers: a few kilobytes that decompress to
gigabytes (a decompression bomb) cost the emulator at most its limit, for every
codec Kafka has; bodies under the limit come back whole."""

from __future__ import annotations

import struct

import cramjam
import pytest

from kafkatest.emulator.protocol.compression import (
    GZIP,
    LZ4,
    SNAPPY,
    ZSTD,
    BodyTooLarge,
    DecompressionError,
    compress,
    decompress,
)

LIMIT = 1 << 20
DATA = bytes(range(256)) * 4096  # 1 MiB, a little over the limit once doubled
XERIAL = b"\x82SNAPPY\x00" + b"\x00\x00\x00\x01" * 2


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
def test_bodies_under_the_limit_come_back_whole(codec: int) -> None:
    assert decompress(codec, compress(codec, DATA), limit=len(DATA)) == DATA


@pytest.mark.parametrize("codec", [GZIP, LZ4, ZSTD])
def test_a_body_over_the_limit_stops_at_the_limit(codec: int) -> None:
    bomb = compress(codec, bytes(64 * LIMIT))
    assert len(bomb) < LIMIT // 3
    with pytest.raises(BodyTooLarge, match="more than 1048576 bytes") as refused:
        decompress(codec, bomb, limit=LIMIT)
    assert refused.value.prefix == bytes(LIMIT)


def test_snappy_lengths_are_checked_before_inflating() -> None:
    # A raw block that claims 2^32 bytes: its length prefix is refused, nothing decoded.
    claims_4gib = b"\x80\x80\x80\x80\x10" + b"\x00" * 8
    with pytest.raises(BodyTooLarge):
        decompress(SNAPPY, claims_4gib, limit=LIMIT)
    block = bytes(cramjam.snappy.compress_raw(bytes(LIMIT // 2)))
    chunks = XERIAL + (struct.pack(">i", len(block)) + block) * 3
    with pytest.raises(BodyTooLarge):
        decompress(SNAPPY, chunks, limit=LIMIT)
    overrun = XERIAL + struct.pack(">i", 1 << 30) + block
    with pytest.raises(DecompressionError, match="overruns"):
        decompress(SNAPPY, overrun, limit=LIMIT)


def test_corrupt_bodies_are_decompression_errors() -> None:
    for codec in (GZIP, SNAPPY, LZ4, ZSTD):
        with pytest.raises(DecompressionError) as refused:
            decompress(codec, b"not compressed at all" * 10, limit=LIMIT)
        assert not isinstance(refused.value, BodyTooLarge)
