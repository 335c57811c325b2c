"""Kafka's LogValidator checks on the records of one produced batch.

The header alone (CRC, counts, flags) is checked in `protocol.batches.validate`;
this walks the records (see `protocol.record_scan`) and applies the topic's
timestamp rules, so that what is stored is what Kafka would store:

- a batch must hold exactly the records its header counts (INVALID_RECORD);
- on a CreateTime topic each record timestamp must lie within
  [now - message.timestamp.before.max.ms, now + message.timestamp.after.max.ms]
  (INVALID_TIMESTAMP, naming each record), and the stored batch's max timestamp
  is the largest record timestamp, whatever the producer wrote there;
- a client may not set the LogAppendTime bit, yet Kafka 4.1 accepts it on a
  CreateTime topic when the batch's max timestamp is a valid time: every record
  then reads as that time, and the batch is stored as CreateTime (bit cleared,
  its records keep their own timestamps). With a max timestamp of -1, or on a
  LogAppendTime topic, every record is refused ("Producer should not set
  timestamp type to LogAppendTime.").
"""

from __future__ import annotations

from kafkatest.emulator.protocol.batches import BatchError, BatchHeader
from kafkatest.emulator.protocol.record_scan import (
    NO_TIMESTAMP,
    scan_records,
    summarize_records,
)
from kafkatest.emulator.state.errors import CorruptMessage, InvalidRecord, TimestampsRejected
from kafkatest.emulator.state.topics import Topic

_LONG = 1 << 64


def checked_max_timestamp(
    topic: Topic, header: BatchHeader, batch: bytes, now: int, log_start_offset: int
) -> int:
    """The max timestamp Kafka stores for this batch on a CreateTime topic.

    Raises InvalidRecord / CorruptMessage / TimestampsRejected as Kafka refuses it.
    """
    try:
        stamps = scan_records(header, batch)
    except BatchError as exc:
        raise (CorruptMessage if exc.kind == "corrupt" else InvalidRecord)(str(exc)) from exc
    create_time = topic.config("message.timestamp.type") == "CreateTime"
    if header.uses_log_append_time and (not create_time or header.max_timestamp == NO_TIMESTAMP):
        raise TimestampsRejected(
            [
                (
                    index,
                    f"Invalid timestamp type in message {record.describe()}. "
                    "Producer should not set timestamp type to LogAppendTime.",
                )
                for index, record in enumerate(summarize_records(header, batch))
            ],
            log_start_offset,
        )
    if create_time:
        before = topic.int_config("message.timestamp.before.max.ms")
        after = topic.int_config("message.timestamp.after.max.ms")
        if now - stamps.low > before or stamps.high - now > after:
            _refuse_out_of_range(header, batch, now, before, after, log_start_offset)
    return stamps.high


def _refuse_out_of_range(
    header: BatchHeader, batch: bytes, now: int, before: int, after: int, log_start_offset: int
) -> None:
    """The slow path: name each record out of range, in Kafka's words."""
    low, high = _java_long(now - before), _java_long(now + after)
    errors = [
        (
            index,
            f"Timestamp {record.timestamp} of message with offset {record.offset_delta} "
            f"is out of range. The timestamp should be within [{low}, {high}]",
        )
        for index, record in enumerate(summarize_records(header, batch))
        if record.timestamp != NO_TIMESTAMP
        and (now - record.timestamp > before or record.timestamp - now > after)
    ]
    if errors:
        raise TimestampsRejected(errors, log_start_offset)


def _java_long(value: int) -> int:
    """`value` wrapped to 64 bits, as Kafka's message computes it."""
    return (value + (1 << 63)) % _LONG - (1 << 63)
