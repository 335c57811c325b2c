"""Batch body codecs: decompressing for by-timestamp lookups and the log cleaner,
compressing for the batches the cleaner rewrites.

Stored batches stay compressed; nothing on the produce or fetch path calls this.
Snappy comes in two framings: raw blocks (librdkafka) and the xerial stream
format (Java). zstd frames from Java carry no content size, so cramjam's
streaming decompressor is used rather than a one-shot block call.
"""

from __future__ import annotations

import struct

import cramjam

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER_SIZE = 16
#: Stream version 1, compatible with version 1 (xerial's SnappyOutputStream header).
_XERIAL_VERSIONS = b"\x00\x00\x00\x01\x00\x00\x00\x01"
_CHUNK_SIZE = struct.Struct(">i")


class DecompressionError(ValueError):
    """The body does not decompress with the codec its batch names."""


def decompress(codec: int, data: bytes | memoryview) -> bytes:
    try:
        if codec == NONE:
            return bytes(data)
        if codec == GZIP:
            return bytes(cramjam.gzip.decompress(bytes(data)))
        if codec == SNAPPY:
            return _snappy(bytes(data))
        if codec == LZ4:
            return bytes(cramjam.lz4.decompress(bytes(data)))
        if codec == ZSTD:
            return bytes(cramjam.zstd.decompress(bytes(data)))
    except Exception as exc:
        raise DecompressionError(f"cannot decompress codec {codec}: {exc}") from exc
    raise DecompressionError(f"unknown compression codec {codec}")


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


def _snappy(data: bytes) -> bytes:
    if not data.startswith(_XERIAL_MAGIC):
        return bytes(cramjam.snappy.decompress_raw(data))
    out = bytearray()
    offset = _XERIAL_HEADER_SIZE
    while offset < len(data):
        (size,) = _CHUNK_SIZE.unpack_from(data, offset)
        offset += 4
        out += bytes(cramjam.snappy.decompress_raw(data[offset : offset + size]))
        offset += size
    return bytes(out)
