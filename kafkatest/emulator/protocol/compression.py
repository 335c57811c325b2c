"""Decompressing batch bodies, needed only to read per-record timestamps.

Stored batches stay compressed; this runs for by-timestamp offset lookups.
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
