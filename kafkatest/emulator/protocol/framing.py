"""Size-prefixed frames, parsed incrementally from whatever bytes arrive.

Kafka frames are a 4-byte big-endian length followed by that many bytes. The
decoder keeps partial frames across reads so a transport can feed it chunks of
any size, and refuses sizes that are negative or over the limit before buffering
them (a hostile or broken client must not make the broker allocate gigabytes).
"""

from __future__ import annotations

import struct

#: Kafka's default ``socket.request.max.bytes``.
DEFAULT_MAX_FRAME_BYTES = 100 * 1024 * 1024

_SIZE = struct.Struct(">i")


class FrameError(Exception):
    """The byte stream cannot be framed any further; the connection must close."""


class FrameDecoder:
    """Accumulates bytes and hands back complete frame payloads in order."""

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        #: The largest frame accepted; may change between reads (a SASL listener
        #: allows unauthenticated clients less).
        self.max_frame_bytes = max_frame_bytes
        self._buffer = bytearray()

    @property
    def pending_bytes(self) -> int:
        """Bytes received that do not yet form a whole frame."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[bytes]:
        """Add `data`; return the payloads of every frame now complete."""
        self._buffer += data
        frames: list[bytes] = []
        buffer = self._buffer
        start = 0
        end = len(buffer)
        while end - start >= 4:
            (size,) = _SIZE.unpack_from(buffer, start)
            if size < 0:
                raise FrameError(f"negative frame size {size}")
            if size > self.max_frame_bytes:
                raise FrameError(
                    f"frame of {size} bytes exceeds the limit of {self.max_frame_bytes} bytes"
                )
            if end - start - 4 < size:
                break
            frames.append(bytes(buffer[start + 4 : start + 4 + size]))
            start += 4 + size
        if start:
            del buffer[:start]
        return frames


def frame(payload: bytes) -> bytes:
    """Prefix `payload` with its size."""
    return _SIZE.pack(len(payload)) + payload
