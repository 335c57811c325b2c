"""Batch bodies inflate as streams of bounded chunks: a few kilobytes that decompress
to gigabytes (a decompression bomb) cost the emulator one chunk at a time and stop at
its limit, for every codec Kafka has; bodies under the limit come back whole."""

from __future__ import annotations

import struct
from pathlib import Path

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
    inflate,
)
from tests.fresh_interpreter import output_lines

LIMIT = 1 << 20
DATA = bytes(range(256)) * 4096  # 1 MiB, a little over the limit once doubled
XERIAL = b"\x82SNAPPY\x00" + b"\x00\x00\x00\x01" * 2


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
def test_bodies_under_the_limit_come_back_whole(codec: int) -> None:
    assert decompress(codec, compress(codec, DATA), limit=len(DATA)) == DATA


@pytest.mark.parametrize("codec", [GZIP, LZ4, ZSTD])
def test_a_body_over_the_limit_stops_at_the_limit_one_chunk_at_a_time(codec: int) -> None:
    bomb = compress(codec, bytes(64 * LIMIT))
    assert len(bomb) < LIMIT // 3
    chunks = inflate(codec, bomb, limit=LIMIT)
    seen = 0
    with pytest.raises(BodyTooLarge, match="more than 1048576 bytes"):
        for chunk in chunks:
            assert len(chunk) <= 256 * 1024
            seen += len(chunk)
    assert seen <= LIMIT


def test_lz4_blocks_are_read_alone_as_kafka_reads_them() -> None:
    """Kafka's LZ4 reader decompresses each block into a buffer of its own: a frame
    whose blocks refer back to earlier ones (linked, as liblz4 makes by default) is
    corrupt to it, and a rewritten batch is framed with independent blocks."""
    linked = bytes(cramjam.lz4.compress(DATA))
    assert linked[4] & 0x20 == 0, "cramjam links blocks"
    with pytest.raises(DecompressionError):
        decompress(LZ4, linked)
    assert bytes(cramjam.lz4.decompress(compress(LZ4, DATA))) == DATA


def test_snappy_lengths_are_checked_before_inflating() -> None:
    # A raw block that claims 2^32 bytes: its length prefix is refused, nothing decoded.
    claims_4gib = b"\x80\x80\x80\x80\x10" + b"\x00" * 8
    with pytest.raises(DecompressionError, match="claims 4294967296"):
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


_PEAK_MEMORY = """
import resource, socket, struct, sys
sys.path[:0] = [{tests!r}, {root!r}]
from batch_builder import build_batch
from test_batch_validation_wire import BOMBS, ZSTD, produce, zstd_frame
from kafkatest.brokers.emulator import EmulatorBroker

broker = EmulatorBroker()
broker.start()
broker.create_topic("bombs", partitions=1)
batches = [
    build_batch([b"x"], attributes=ZSTD, compress=lambda _, parts=parts: zstd_frame(*parts))
    for parts, _, _ in BOMBS.values()
]
produce(broker, "bombs", build_batch([b"warm-up"]))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for _ in range(8):
    for batch in batches:
        produce(broker, "bombs", batch)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) // 1024)
broker.close()
"""


def test_zstd_bombs_raise_the_peak_memory_by_a_few_mib(tmp_path: Path) -> None:
    """Eight rounds of the 300 MiB bombs (9.7 KB each) through an emulator in a fresh
    process: its peak RSS, which once grew by 258 MiB a bomb, grows by a few MiB."""
    here = Path(__file__).parent
    code = _PEAK_MEMORY.format(tests=str(here), root=str(here.parents[1]))
    [grown_mib] = output_lines(code, tmp_path)
    assert int(grown_mib) <= 8
