"""Batch body codecs: decompressing for by-timestamp lookups and the log cleaner,
compressing for the batches the cleaner rewrites.

Stored batches stay compressed; nothing on the produce or fetch path calls this.
Snappy comes in two framings: raw blocks (librdkafka) and the xerial stream
format (Java). zstd frames from Java carry no content size, so cramjam's
streaming decompressor is used rather than a one-shot block call.

A body is decompressed into a bounded buffer: Kafka validates a compressed batch
record by record and never holds it whole, but the emulator does, so a small batch
of zeros that inflates to gigabytes (a decompression bomb) must not be able to
allocate what its sender chose. Past `MAX_DECOMPRESSED_BYTES` the batch is refused
as corrupt (README, "Known differences").
"""

from __future__ import annotations

import struct
from typing import Any

import cramjam

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER_SIZE = 16
#: Stream version 1, compatible with version 1 (xerial's SnappyOutputStream header).
_XERIAL_VERSIONS = b"\x00\x00\x00\x01\x00\x00\x00\x01"
_CHUNK_SIZE = struct.Struct(">i")
#: The most one batch body may decompress to (128 MiB).
MAX_DECOMPRESSED_BYTES = 128 * 1024 * 1024
#: The first output buffer, as a multiple of the compressed size; it grows 4x a try.
_FIRST_RATIO = 8
_MIN_BUFFER = 64 * 1024
_STREAM_CODECS = {GZIP: cramjam.gzip, LZ4: cramjam.lz4, ZSTD: cramjam.zstd}


class DecompressionError(ValueError):
    """The body does not decompress with the codec its batch names."""


class BodyTooLarge(DecompressionError):
    """The body inflates past the limit; `prefix` holds its first `limit` bytes, enough
    to tell a batch whose declared records end early from one that needs them all."""

    def __init__(self, message: str, prefix: bytes) -> None:
        super().__init__(message)
        self.prefix = prefix


def decompress(codec: int, data: bytes | memoryview, limit: int = MAX_DECOMPRESSED_BYTES) -> bytes:
    """The body `data` decompressed, refused with DecompressionError past `limit` bytes."""
    if codec == NONE:
        return bytes(data)
    if codec == SNAPPY:
        return _snappy(bytes(data), limit)
    module = _STREAM_CODECS.get(codec)
    if module is None:
        raise DecompressionError(f"unknown compression codec {codec}")
    return _bounded(codec, module.decompress_into, bytes(data), limit)


def _bounded(codec: int, decompress_into: Any, data: bytes, limit: int) -> bytes:
    """Decompress into a buffer that grows 4x a try up to `limit` (cramjam refuses to
    write past a buffer's end, so a too-small one costs one failed try, not memory)."""
    size = min(limit, max(_MIN_BUFFER, _FIRST_RATIO * len(data)))
    while True:
        out = bytearray(size)
        try:
            written = decompress_into(data, out)
        except Exception as exc:
            if "failed to write whole buffer" not in str(exc):
                raise DecompressionError(f"cannot decompress codec {codec}: {exc}") from exc
            if size >= limit:
                raise _too_large(codec, limit, bytes(out)) from None
            size = min(limit, size * 4)
            continue
        return bytes(memoryview(out)[:written])


def _too_large(codec: int, limit: int, prefix: bytes = b"") -> BodyTooLarge:
    return BodyTooLarge(
        f"codec {codec} body decompresses to more than {limit} bytes, the most the "
        "emulator holds for one batch",
        prefix,
    )


def compress(codec: int, data: bytes) -> bytes:
    """`data` compressed with `codec`, framed as the Java client frames it (snappy in
    xerial chunks, lz4 as an LZ4 frame), so every client reads a rewritten batch."""
    if codec == NONE:
        return data
    if codec == GZIP:
        return bytes(cramjam.gzip.compress(data))
    if codec == SNAPPY:
        block = bytes(cramjam.snappy.compress_raw(data))
        return _XERIAL_MAGIC + _XERIAL_VERSIONS + _CHUNK_SIZE.pack(len(block)) + block
    if codec == LZ4:
        return bytes(cramjam.lz4.compress(data))
    if codec == ZSTD:
        return bytes(cramjam.zstd.compress(data))
    raise DecompressionError(f"unknown compression codec {codec}")


def _snappy(data: bytes, limit: int) -> bytes:
    """Raw snappy blocks say their decompressed length up front: checked before any
    output is allocated, for each xerial chunk and for the total."""
    if not data.startswith(_XERIAL_MAGIC):
        return _snappy_block(data, limit)
    out = bytearray()
    offset = _XERIAL_HEADER_SIZE
    while offset + _CHUNK_SIZE.size <= len(data):
        (size,) = _CHUNK_SIZE.unpack_from(data, offset)
        offset += _CHUNK_SIZE.size
        if size < 0 or offset + size > len(data):
            raise DecompressionError(f"snappy chunk of {size} bytes overruns the body")
        out += _snappy_block(data[offset : offset + size], limit - len(out))
        offset += size
    return bytes(out)


def _snappy_block(block: bytes, limit: int) -> bytes:
    length = _uvarint_prefix(block)
    if length > limit:
        raise _too_large(SNAPPY, limit)
    try:
        return bytes(cramjam.snappy.decompress_raw(block))
    except Exception as exc:
        raise DecompressionError(f"cannot decompress codec {SNAPPY}: {exc}") from exc


def _uvarint_prefix(block: bytes) -> int:
    """The uncompressed length a raw snappy block starts with (up to 5 bytes)."""
    value = 0
    for shift, byte in zip(range(0, 35, 7), block, strict=False):
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value
    raise DecompressionError("snappy block without a valid length")
