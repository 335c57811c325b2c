"""What a client has sent beyond the request being handled.

Requests on a connection are answered one at a time and in order, as Kafka mutes a
channel while a request is in flight. A Fetch parked at the end of the log (waiting
up to its max_wait for data) therefore holds back whatever the client sent behind
it: Spark's executor consumer, having read its range, asks for the partition's
offsets (ListOffsets) right behind the fetch it pipelined, and waits out the whole
max_wait (500 ms) per task. Kafka does the same; the emulator instead answers a
parked Fetch as soon as the client has sent its next request on that connection:
the Fetch's answer (what was there) is one Kafka could have given at its deadline,
only sooner.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import SupportsIndex

from kafkatest.emulator.protocol.framing import FrameDecoder
from kafkatest.emulator.state.notify import Signal


class ClientInbox:
    """Counts what is waiting behind the current request: whole frames already read,
    a partial frame, or bytes still in the stream's buffer."""

    def __init__(self, reader: NotifyingStreamReader, decoder: FrameDecoder) -> None:
        self._reader = reader
        self.decoder = decoder
        #: Frames read in the same chunk as the one being handled, not yet handled.
        self.queued_frames = 0

    @property
    def arrivals(self) -> Signal:
        """Notified whenever the client sends bytes."""
        return self._reader.arrivals

    def waiting(self) -> bool:
        """Whether the client has sent anything beyond the request being handled."""
        return bool(self.queued_frames or self.decoder.pending_bytes or self._reader.buffered)


class NotifyingStreamReader(asyncio.StreamReader):
    """An asyncio StreamReader that signals each arrival of bytes."""

    def __init__(self, limit: int = 2**16, loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(limit=limit, loop=loop)
        self.arrivals = Signal()

    @property
    def buffered(self) -> int:
        """Bytes received and not yet read."""
        return len(self._buffer)  # type: ignore[attr-defined]

    def feed_data(self, data: Iterable[SupportsIndex]) -> None:
        super().feed_data(data)
        self.arrivals.notify()
