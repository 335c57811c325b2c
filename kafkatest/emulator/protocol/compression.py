"""Batch body codecs: inflating a produced batch as a stream of bounded chunks, and
compressing the batches the log cleaner rewrites.

Kafka validates a compressed batch record by record from a decompressing stream
and never holds the body whole; so does the emulator (`inflate` yields the body in
chunks of at most a few hundred KiB, `record_scan` walks records across them), so a
9 KB batch of zeros that inflates to gigabytes (a decompression bomb) costs what one
chunk costs, and a batch is refused at its first bad record without inflating the
rest. Each codec's buffers are bounded by what its format lets a sender choose:

- gzip: zlib's 32 KiB window; output taken `CHUNK_SIZE` at a time.
- zstd: the frame's window, at most `ZSTD_MAX_WINDOW` (a frame that asks for more is
  refused); output read `CHUNK_SIZE` at a time.
- lz4: Kafka's own framing reads each block alone into a buffer of the frame's block
  size (64 KiB to 4 MiB); a block that refers to an earlier one is corrupt to Kafka,
  so it is here too.
- snappy: a raw block (librdkafka) or each xerial chunk (Java) says its length up
  front, checked before any output is allocated; a block inflates at most ~21x.

`MAX_DECOMPRESSED_BYTES` bounds the time, not the memory: Kafka has no such limit,
but inflating a batch runs on the loop every client shares, so a body that inflates
past it is refused as corrupt (docs/explanation/differences.md). Stored batches read back
whole (`decompress`: by-timestamp lookups, the cleaner) passed that on produce.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator

import cramjam
import zstandard

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER_SIZE = 16
#: Stream version 1, compatible with version 1 (xerial's SnappyOutputStream header).
_XERIAL_VERSIONS = b"\x00\x00\x00\x01\x00\x00\x00\x01"
_CHUNK_SIZE = struct.Struct(">i")
#: The most one batch body may inflate to (1 GiB: about 0.2 s of zstd on the loop).
MAX_DECOMPRESSED_BYTES = 1 << 30
#: The most output one step of inflating produces (zstd: one input step's blocks).
CHUNK_SIZE = 64 * 1024
#: The largest zstd window a frame may ask for (8 MiB: what levels up to 19 use).
ZSTD_MAX_WINDOW = 8 << 20
#: zstd input read at a time (the reader's output stays within what `read` asks).
_ZSTD_READ_SIZE = 16 * 1024
_ZSTD_MAGIC = 0xFD2FB528
_ZSTD_SKIPPABLE = 0x184D2A50

_LZ4_MAGIC = 0x184D2204
_LZ4_BLOCK_SIZES = {4: 64 << 10, 5: 256 << 10, 6: 1 << 20, 7: 4 << 20}
_LZ4_UNCOMPRESSED = 0x80000000
_U32 = struct.Struct("<I")
#: FLG (version 1, independent blocks) and BD (64 KiB blocks) with their checksum byte.
_LZ4_FRAME_HEADER = _U32.pack(_LZ4_MAGIC) + b"\x60\x40\x82"
_LZ4_BLOCK = 64 << 10


class DecompressionError(ValueError):
    """The body does not decompress with the codec its batch names."""


class BodyTooLarge(DecompressionError):
    """The body inflates past the limit."""


def inflate(
    codec: int, data: bytes | memoryview, limit: int = MAX_DECOMPRESSED_BYTES
) -> Iterator[bytes | memoryview]:
    """The body `data` decompressed, as chunks (each a few hundred KiB at most, a
    snappy block at most ~21x its compressed size); DecompressionError when it is not
    valid, BodyTooLarge once more than `limit` bytes have come out."""
    if codec == NONE:
        yield memoryview(data)
        return
    chunks = _CODECS.get(codec)
    if chunks is None:
        raise DecompressionError(f"unknown compression codec {codec}")
    total = 0
    try:
        for chunk in chunks(bytes(data)):
            total += len(chunk)
            if total > limit:
                raise BodyTooLarge(
                    f"codec {codec} body decompresses to more than {limit} bytes, the most "
                    "the emulator inflates for one batch"
                )
            if chunk:
                yield chunk
    except DecompressionError:
        raise
    except Exception as exc:  # each codec library has its own error types
        raise DecompressionError(f"cannot decompress codec {codec}: {exc}") from exc


def decompress(codec: int, data: bytes | memoryview, limit: int = MAX_DECOMPRESSED_BYTES) -> bytes:
    """The body `data` decompressed whole (a stored batch, which passed `inflate`)."""
    if codec == NONE:
        return bytes(data)
    return b"".join(inflate(codec, data, limit))


def _gzip(data: bytes) -> Iterator[bytes]:
    """Every gzip member in turn (Java's GZIPInputStream reads concatenated members)."""
    rest = data
    while rest:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        pending = rest
        while not inflater.eof:
            out = inflater.decompress(pending, CHUNK_SIZE)
            pending = inflater.unconsumed_tail
            if not out and not pending:
                raise DecompressionError(f"gzip stream of codec {GZIP} ends early")
            yield out
        rest = inflater.unused_data


def _zstd(data: bytes) -> Iterator[bytes]:
    """Frame after frame, `CHUNK_SIZE` bytes of output at a time. zstd's stream reader
    takes a truncated last frame for the end of the data, so at the end the frames'
    block headers are walked to tell (what cramjam's one-shot call refuses)."""
    reader = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW).stream_reader(
        data, read_size=_ZSTD_READ_SIZE, read_across_frames=True
    )
    while chunk := reader.read(CHUNK_SIZE):
        yield chunk
    _check_zstd_frames(data)


def _check_zstd_frames(data: bytes) -> None:
    """Raise DecompressionError unless `data` is whole zstd frames (RFC 8878 3.1)."""
    offset = 0
    while offset < len(data):
        if offset + 4 > len(data):
            raise DecompressionError("zstd data ends inside a frame's magic number")
        (magic,) = _U32.unpack_from(data, offset)
        offset += 4
        if magic & 0xFFFFFFF0 == _ZSTD_SKIPPABLE:
            if offset + 4 > len(data):
                raise DecompressionError("zstd skippable frame ends early")
            offset += 4 + _U32.unpack_from(data, offset)[0]
            continue
        if magic != _ZSTD_MAGIC or offset >= len(data):
            raise DecompressionError("not a zstd frame")
        descriptor = data[offset]
        single_segment = descriptor >> 5 & 1
        content_size = (1 if single_segment else 0, 2, 4, 8)[descriptor >> 6]
        offset += 1 + (1 - single_segment) + (0, 1, 2, 4)[descriptor & 3] + content_size
        last = 0
        while not last:
            if offset + 3 > len(data):
                raise DecompressionError(f"zstd frame of codec {ZSTD} ends early")
            header = int.from_bytes(data[offset : offset + 3], "little")
            last, kind, size = header & 1, header >> 1 & 3, header >> 3
            offset += 3 + (1 if kind == 1 else size)
        offset += 4 if descriptor & 0x04 else 0
        if offset > len(data):
            raise DecompressionError(f"zstd frame of codec {ZSTD} ends early")


def _lz4(data: bytes) -> Iterator[bytes]:
    """One LZ4 frame, block by block as Kafka's KafkaLZ4BlockInputStream reads it."""
    if len(data) < 7 or _U32.unpack_from(data)[0] != _LZ4_MAGIC:
        raise DecompressionError("not an LZ4 frame")
    flags, descriptor = data[4], data[5]
    if flags >> 6 != 1 or flags & 0x03:
        raise DecompressionError(f"LZ4 frame flags {flags:#x} are not version 1")
    block_size = _LZ4_BLOCK_SIZES.get((descriptor >> 4) & 0x07)
    if block_size is None or descriptor & 0x8F:
        raise DecompressionError(f"LZ4 block descriptor {descriptor:#x} is not valid")
    offset = 7 + (8 if flags & 0x08 else 0)
    block_checksum = 4 if flags & 0x10 else 0
    while True:
        if offset + 4 > len(data):
            raise DecompressionError("LZ4 frame ends before its end mark")
        (size,) = _U32.unpack_from(data, offset)
        offset += 4
        stored, size = size & _LZ4_UNCOMPRESSED, size & ~_LZ4_UNCOMPRESSED
        if size == 0:
            return
        if size > block_size or offset + size > len(data):
            raise DecompressionError(f"LZ4 block of {size} bytes does not fit")
        block = data[offset : offset + size]
        offset += size + block_checksum
        if stored:
            yield block
            continue
        # Into a buffer of the frame's block size: `decompress_block(output_len=...)`
        # would hand back the whole buffer, its unused tail as zeros after the records.
        out = bytearray(block_size)
        written = cramjam.lz4.decompress_block_into(block, out)
        yield bytes(memoryview(out)[:written])


def _snappy(data: bytes) -> Iterator[bytes]:
    """Raw snappy blocks say their decompressed length up front: checked before any
    output is allocated, for each xerial chunk."""
    if not data.startswith(_XERIAL_MAGIC):
        yield _snappy_block(data)
        return
    offset = _XERIAL_HEADER_SIZE
    while offset + _CHUNK_SIZE.size <= len(data):
        (size,) = _CHUNK_SIZE.unpack_from(data, offset)
        offset += _CHUNK_SIZE.size
        if size < 0 or offset + size > len(data):
            raise DecompressionError(f"snappy chunk of {size} bytes overruns the body")
        yield _snappy_block(data[offset : offset + size])
        offset += size


def _snappy_block(block: bytes) -> bytes:
    length = _uvarint_prefix(block)
    # Snappy's densest copy makes 64 bytes of 3: a longer claim cannot be true.
    if length > 22 * len(block):
        raise DecompressionError(f"snappy block of {len(block)} bytes claims {length}")
    return bytes(cramjam.snappy.decompress_raw(block))


def _uvarint_prefix(block: bytes) -> int:
    """The uncompressed length a raw snappy block starts with (up to 5 bytes)."""
    value = 0
    for shift, byte in zip(range(0, 35, 7), block, strict=False):
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value
    raise DecompressionError("snappy block without a valid length")


_CODECS = {GZIP: _gzip, SNAPPY: _snappy, LZ4: _lz4, ZSTD: _zstd}


def compress(codec: int, data: bytes) -> bytes:
    """`data` compressed with `codec`, framed as the Java client frames it (snappy in
    xerial chunks, lz4 as a frame of independent 64 KiB blocks, which is all Kafka's
    reader takes), so every client reads a rewritten batch."""
    if codec == NONE:
        return data
    if codec == GZIP:
        return bytes(cramjam.gzip.compress(data))
    if codec == SNAPPY:
        block = bytes(cramjam.snappy.compress_raw(data))
        return _XERIAL_MAGIC + _XERIAL_VERSIONS + _CHUNK_SIZE.pack(len(block)) + block
    if codec == LZ4:
        return _lz4_frame(data)
    if codec == ZSTD:
        return bytes(cramjam.zstd.compress(data))
    raise DecompressionError(f"unknown compression codec {codec}")


def _lz4_frame(data: bytes) -> bytes:
    out = bytearray(_LZ4_FRAME_HEADER)
    for start in range(0, len(data), _LZ4_BLOCK):
        piece = data[start : start + _LZ4_BLOCK]
        block = bytes(cramjam.lz4.compress_block(piece, store_size=False))
        if len(block) >= len(piece):
            out += _U32.pack(len(piece) | _LZ4_UNCOMPRESSED) + piece
        else:
            out += _U32.pack(len(block)) + block
    return bytes(out + _U32.pack(0))
