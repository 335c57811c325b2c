"""A long, truncated log in the fuzzed emulator, and requests that look it up.

ListOffsets by timestamp over 20,000 one-record batches after DeleteRecords to near
their end once froze every client for minutes (issue 44), and the fuzzer found it
only by chance, after its own produce and DeleteRecords frames had built such a
log. The fuzzed emulator now starts with one (`prepare_long_log`), and the corpus
carries ListOffsets and Metadata frames that name it once and a thousand times
(`long_log_frames`), intact and mutated like every other frame.
"""

from __future__ import annotations

import io
import struct
import sys
import time
from typing import Any

from kio.schema.list_offsets.v7 import request as list_offsets
from kio.schema.metadata.v12 import request as metadata
from kio.schema.types import BrokerId, TopicName
from kio.serial import entity_writer
from kio.static.primitive import i8, i32, i64

from kafkatest.emulator.protocol import frame, single_record_batch, split_batches

LONG_TOPIC = "fuzz-long"
LONG_LOG_BATCHES = 20_000
#: DeleteRecords leaves this many records at the end of the log.
KEPT_AT_THE_END = 10
#: The first record's timestamp; each next one is a second later.
FIRST_TIMESTAMP_MS = 1_700_000_000_000
_NAMINGS = (1, 10, 1_000)
_TIMESTAMPS = (0, -1, -2, -3, FIRST_TIMESTAMP_MS + (LONG_LOG_BATCHES - 5) * 1_000)


def prepare_long_log(broker: Any) -> None:
    """Create `LONG_TOPIC` with `LONG_LOG_BATCHES` one-record batches and delete all but
    the last `KEPT_AT_THE_END` (on the broker's loop, before the first frame)."""
    # Kept for ever: the timestamps are fixed, and 7 days' retention would delete them.
    broker.create_topic(LONG_TOPIC, partitions=1, config={"retention.ms": "-1"})

    def fill() -> None:
        state = broker.state
        topic = state.topics.get(LONG_TOPIC)
        for n in range(LONG_LOG_BATCHES):
            batch = single_record_batch(None, b"x", FIRST_TIMESTAMP_MS + n * 1_000)
            [(header, raw)] = split_batches(batch)
            state.append(topic, 0, header, raw)
        state.delete_records(topic, 0, LONG_LOG_BATCHES - KEPT_AT_THE_END)

    started = time.monotonic()
    broker.call(fill)
    print(
        f"fuzz: {LONG_TOPIC} holds {LONG_LOG_BATCHES} one-record batches, all but the last "
        f"{KEPT_AT_THE_END} deleted ({time.monotonic() - started:.1f} s)",
        file=sys.stderr,  # stdout's first line is the emulator's address
        flush=True,
    )


def long_log_frames() -> list[bytes]:
    """ListOffsets (each timestamp kind) and Metadata naming `LONG_TOPIC` 1, 10 and
    1,000 times."""
    frames = []
    for namings in _NAMINGS:
        for timestamp in _TIMESTAMPS:
            partition = list_offsets.ListOffsetsPartition(
                partition_index=i32(0), current_leader_epoch=i32(-1), timestamp=i64(timestamp)
            )
            request: Any = list_offsets.ListOffsetsRequest(
                replica_id=BrokerId(-1),
                isolation_level=i8(0),
                topics=(
                    list_offsets.ListOffsetsTopic(
                        name=TopicName(LONG_TOPIC), partitions=(partition,) * namings
                    ),
                ),
            )
            frames.append(_frame_of(2, 7, request))
        request = metadata.MetadataRequest(
            topics=(metadata.MetadataRequestTopic(topic_id=None, name=TopicName(LONG_TOPIC)),)
            * namings,
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=False,
        )
        frames.append(_frame_of(3, 12, request))
    return frames


def _frame_of(api_key: int, version: int, request: Any) -> bytes:
    body = io.BytesIO()
    entity_writer(type(request))(body, request)
    header = struct.pack(">hhih", api_key, version, 1, 4) + b"fuzz\x00"
    return frame(header + body.getvalue())


def slowest_request(log_text: str) -> tuple[float, int | None]:
    """(milliseconds, API key) of the longest-handled request in an emulator log's
    request timings (`kafkatest emulator --timings`), or (0, None) without any."""
    slowest: tuple[float, int | None] = (0.0, None)
    lines = log_text.splitlines()
    for index, line in enumerate(lines):
        if "request timings" not in line:
            continue
        header = lines[index + 1].split()
        handled = header.index("handled_max_ms")
        for row in lines[index + 2 :]:
            fields = row.split()
            if not fields or not fields[0].lstrip("-").isdigit():
                break
            # The header names one column per field after the api key and request count.
            value = float(fields[handled])
            if value > slowest[0]:
                slowest = (value, int(fields[0]))
    return slowest
