"""The topics in a consumer's group subscription (the "consumer" protocol's metadata).

The broker normally treats member metadata as opaque bytes; OffsetDelete is the one
place Kafka looks inside, to refuse deleting offsets of a topic the group still
reads. Every version (0-3) starts with the same fields: version i16, then an array
of i16-length topic names, so only that prefix is read.
"""

from __future__ import annotations

import struct


def subscribed_topics(metadata: bytes) -> frozenset[str] | None:
    """The subscribed topic names, or None when `metadata` is not a valid subscription."""
    try:
        (count,) = struct.unpack_from(">i", metadata, 2)
        if count < 0:
            return None
        offset, topics = 6, set()
        for _ in range(count):
            (length,) = struct.unpack_from(">h", metadata, offset)
            offset += 2
            if length < 0 or offset + length > len(metadata):
                return None
            topics.add(metadata[offset : offset + length].decode())
            offset += length
    except (struct.error, UnicodeDecodeError):
        return None
    return frozenset(topics)
