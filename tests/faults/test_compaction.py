"""Log compaction on every backend, observed through librdkafka and the raw protocol.

What real Kafka 4.1 does (run with `--kafka-backend=kafka`) and the emulator must
match: the cleaner keeps the latest record per key below the active segment and
leaves offsets alone, so readers see gaps; a tombstone survives the pass that first
sees it and goes on a pass after delete.retention.ms; min.compaction.lag.ms holds
recent segments back; the active segment is never cleaned; a keyless record is
refused by a compacted topic. `compact_now` writes one marker tombstone per
partition (key `COMPACT_NOW_KEY`) to roll the active segment, which readers see too.
"""

from __future__ import annotations

import datetime
import struct
import time
import uuid
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from crc32c import crc32c
from kio.schema.errors import ErrorCode
from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData
from kio.schema.produce.v9.response import ProduceResponse
from kio.serial import entity_reader

from kafkatest.apps.tools import CONSOLE_CONSUMER, run_kafka_tool, tool_option
from kafkatest.brokers.base import Broker
from kafkatest.brokers.client import wait_until
from kafkatest.emulator import COMPACT_NOW_KEY
from kafkatest.errors import BrokerError
from kafkatest.faults import Faults
from kafkatest.records import Record
from tests.emulator.batch_builder import RECENT_MS, encode_record
from tests.emulator.raw_client import connect, encode, read_frame, request_frame

COMPACT = {"cleanup.policy": "compact"}
MARKER = (COMPACT_NOW_KEY, None)


def _rounds(broker: Broker, topic: str, rounds: int, timestamp_ms: int | None = None) -> None:
    """`rounds` updates of keys a, b, c: values a0, b0, c0, a1, ..."""
    for r in range(rounds):
        broker.produce(
            Record(topic=topic, key=k.encode(), value=f"{k}{r}".encode(), timestamp_ms=timestamp_ms)
            for k in "abc"
        )


def _read(broker: Broker, topic: str) -> list[tuple[int | None, bytes | None, bytes | None]]:
    return [(r.offset, r.key, r.value) for r in broker.consume(topic)]


def test_compaction_keeps_the_latest_value_per_key_and_leaves_offset_gaps(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic(config=COMPACT)
    _rounds(kafka_broker, topic, 3)

    assert kafka_faults.compact_now(topic) == {0: 9}

    assert _read(kafka_broker, topic) == [
        (6, b"a", b"a2"),
        (7, b"b", b"b2"),
        (8, b"c", b"c2"),
        (9, *MARKER),
    ]
    # The log start does not move: compaction is not deletion.
    assert kafka_broker.earliest_offsets(topic) == {0: 0}
    assert kafka_broker.latest_offsets(topic) == {0: 10}


def test_tombstones_survive_the_first_pass_and_go_after_delete_retention(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    # delete.retention.ms=0: the first pass stamps the horizon "now", the next drops them.
    topic = kafka_topic(config={**COMPACT, "delete.retention.ms": 0})
    _rounds(kafka_broker, topic, 1)
    kafka_broker.produce([Record(topic=topic, key=b"a", value=None)])

    kafka_faults.compact_now(topic)
    assert _read(kafka_broker, topic) == [
        (1, b"b", b"b0"),
        (2, b"c", b"c0"),
        (3, b"a", None),
        (4, *MARKER),
    ]

    kafka_faults.compact_now(topic)
    # The first marker is itself a tombstone on its first pass.
    assert _read(kafka_broker, topic) == [
        (1, b"b", b"b0"),
        (2, b"c", b"c0"),
        (4, *MARKER),
        (5, *MARKER),
    ]


def test_tombstones_stay_until_their_delete_horizon(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic(config={**COMPACT, "delete.retention.ms": 3_600_000})
    kafka_broker.produce([Record(topic=topic, key=b"a", value=b"1")])
    kafka_broker.produce([Record(topic=topic, key=b"a", value=None)])

    kafka_faults.compact_now(topic)
    kafka_faults.compact_now(topic)

    assert _read(kafka_broker, topic) == [(1, b"a", None), (2, *MARKER), (3, *MARKER)]


def test_min_compaction_lag_holds_recent_segments_back(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    # Rounds 0 and 1 are two hours old, round 2 is new: segment.ms=60000 rolls the
    # segment when round 2 arrives, and a one-hour lag keeps round 2's segment (and
    # everything after) out of the cleaner's reach, so round 1 survives beside it.
    topic = kafka_topic(
        config={**COMPACT, "min.compaction.lag.ms": 3_600_000, "segment.ms": 60_000}
    )
    two_hours_ago = int(time.time() * 1000) - 2 * 3_600_000
    _rounds(kafka_broker, topic, 2, timestamp_ms=two_hours_ago)
    kafka_broker.produce(Record(topic=topic, key=k.encode(), value=f"{k}2".encode()) for k in "abc")

    with pytest.raises(BrokerError, match=r"min\.compaction\.lag\.ms"):
        kafka_faults.compact_now(topic, timeout_s=5)
    assert kafka_faults.compact_now(topic, until=6) == {0: 6}

    assert _read(kafka_broker, topic) == [
        (3, b"a", b"a1"),
        (4, b"b", b"b1"),
        (5, b"c", b"c1"),
        (6, b"a", b"a2"),
        (7, b"b", b"b2"),
        (8, b"c", b"c2"),
        (9, *MARKER),
        (10, *MARKER),
    ]


def test_the_active_segment_is_never_cleaned(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    # segment.ms=60000: rounds 0-1 (ten minutes old) fill one segment; round 2 (new)
    # rolls the next one, which stays active. The cleaner reaches its start and stops.
    topic = kafka_topic(config={**COMPACT, "segment.ms": 60_000})
    _rounds(kafka_broker, topic, 2, timestamp_ms=int(time.time() * 1000) - 600_000)
    _rounds(kafka_broker, topic, 1)
    kafka_broker.produce(Record(topic=topic, key=k.encode(), value=f"{k}3".encode()) for k in "abc")

    assert kafka_faults.compact_now(topic, until=6, roll=False) == {0: 6}

    assert _read(kafka_broker, topic) == [
        (3, b"a", b"a1"),
        (4, b"b", b"b1"),
        (5, b"c", b"c1"),
        (6, b"a", b"a0"),
        (7, b"b", b"b0"),
        (8, b"c", b"c0"),
        (9, b"a", b"a3"),
        (10, b"b", b"b3"),
        (11, b"c", b"c3"),
    ]


def test_compact_now_needs_a_compacted_topic(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    topic = kafka_topic()
    with pytest.raises(BrokerError, match=r"cleanup\.policy=delete"):
        kafka_faults.compact_now(topic)


def _batch(keys: list[bytes | None]) -> bytes:
    records = b"".join(encode_record(i, 0, k, b"v") for i, k in enumerate(keys))
    after_crc = (
        struct.pack(">hiqqqhii", 0, len(keys) - 1, RECENT_MS, RECENT_MS, -1, -1, -1, len(keys))
        + records
    )
    body = struct.pack(">ibI", -1, 2, crc32c(after_crc)) + after_crc
    return struct.pack(">qi", 0, len(body)) + body


def test_keyless_records_are_refused_by_a_compacted_topic(
    kafka_broker: Broker, kafka_topic: Callable[..., str]
) -> None:
    topic = kafka_topic(config=COMPACT)
    request = ProduceRequest(
        transactional_id=None,
        acks=-1,
        timeout=datetime.timedelta(seconds=5),
        topic_data=(
            TopicProduceData(
                name=topic,
                partition_data=(PartitionProduceData(index=0, records=_batch([b"a", None, None])),),
            ),
        ),
    )
    with connect(kafka_broker.bootstrap_servers) as sock:
        sock.sendall(request_frame(0, 9, 1, encode(request)))
        reply = read_frame(sock)
    assert reply is not None
    response, _ = entity_reader(ProduceResponse)(reply, 5)
    partition = response.responses[0].partition_responses[0]

    why = f"Compacted topic cannot accept message without key in topic partition {topic}-0"
    assert partition.error_code is ErrorCode.invalid_record
    assert [(e.batch_index, e.batch_index_error_message) for e in partition.record_errors] == [
        (1, why),
        (2, why),
    ]
    assert partition.error_message == (
        "One or more records have been rejected due to 2 record errors in total, and only "
        f"showing the first three errors at most: [RecordError(batchIndex=1, message='{why}'), "
        f"RecordError(batchIndex=2, message='{why}')]"
    )
    assert kafka_broker.latest_offsets(topic) == {0: 0}


def _read_uncommitted(broker: Broker, topic: str) -> list[tuple[int, bytes | None, bytes | None]]:
    """Every record a read_uncommitted consumer gets, aborted ones included."""
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "group.id": f"reader-{uuid.uuid4().hex[:8]}",
            "enable.partition.eof": True,
            "isolation.level": "read_uncommitted",
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    out: list[tuple[int, bytes | None, bytes | None]] = []
    try:
        for _ in range(600):
            msg = consumer.poll(0.1)
            if msg is None:
                continue
            error = msg.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    return out
                raise KafkaException(error)
            out.append((msg.offset(), msg.key(), msg.value()))
    finally:
        consumer.close()
    raise AssertionError(f"never reached the end of {topic}: {out}")


def test_compaction_drops_aborted_transactions_and_keeps_the_markers(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    # Kafka's cleaner leaves aborted records out of its key map and drops them, so a1
    # (committed) survives the aborted a2; markers stay while their transaction's
    # batches do (the aborted batch stays empty: it holds the producer's last sequence).
    topic = kafka_topic(config=COMPACT)
    producer = Producer(
        {**kafka_broker.client_config(), "transactional.id": f"txn-{uuid.uuid4().hex[:8]}"}
    )
    producer.init_transactions(30)
    for values, commit in (({b"a": b"a1", b"b": b"b1"}, True), ({b"a": b"a2", b"c": b"c2"}, False)):
        producer.begin_transaction()
        for key, value in values.items():
            producer.produce(topic, value, key=key, partition=0)
        producer.flush(30)  # aborting would otherwise drop what is still queued
        if commit:
            producer.commit_transaction(30)
        else:
            producer.abort_transaction(30)
    # Kafka writes markers just after EndTxn answers: let the abort marker land first.
    wait_until(lambda: kafka_broker.latest_offsets(topic) == {0: 6}, 30, "markers written")
    kafka_broker.produce([Record(topic=topic, key=b"b", value=b"b3", partition=0)])
    before = [(0, b"a", b"a1"), (1, b"b", b"b1"), (3, b"a", b"a2"), (4, b"c", b"c2")]
    assert _read_uncommitted(kafka_broker, topic) == [*before, (6, b"b", b"b3")]

    kafka_faults.compact_now(topic)

    after = [(0, b"a", b"a1"), (6, b"b", b"b3"), (7, *MARKER)]
    assert _read_uncommitted(kafka_broker, topic) == after
    assert _read(kafka_broker, topic) == after
    kafka_faults.compact_now(topic)
    assert _read_uncommitted(kafka_broker, topic) == [*after, (8, *MARKER)]


def test_an_open_transaction_holds_the_cleaner_back_until_it_ends(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    # The cleaner stops at the last stable offset (rounded down to its segment's start):
    # the open transaction at offset 10 keeps the segment from 6 on dirty until it commits.
    topic = kafka_topic(config=COMPACT)
    _rounds(kafka_broker, topic, 2)
    assert kafka_faults.compact_now(topic) == {0: 6}
    kafka_broker.produce(Record(topic=topic, key=k.encode(), value=f"{k}2".encode()) for k in "abc")
    producer = Producer(
        {**kafka_broker.client_config(), "transactional.id": f"txn-{uuid.uuid4().hex[:8]}"}
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"t", key=b"a", partition=0)
    producer.flush(30)

    # Real Kafka sometimes stops at 7 instead (a loaded machine saw it in full runs: a
    # segment rolled at the compact_now marker before the cleaner's pass); either way
    # the cleaner stops short of the open transaction, which is what this shows, and
    # asking for 6 then finds what that pass reached.
    with pytest.raises(BrokerError, match=r"only up to offsets \{0: [67]\}") as stopped:
        kafka_faults.compact_now(topic, timeout_s=5)
    reached = 7 if "{0: 7}" in str(stopped.value) else 6
    assert kafka_faults.compact_now(topic, until=6) == {0: reached}
    assert _read_uncommitted(kafka_broker, topic)[:5] == [
        (3, b"a", b"a1"),
        (4, b"b", b"b1"),
        (5, b"c", b"c1"),
        (6, *MARKER),
        (7, b"a", b"a2"),
    ]

    producer.commit_transaction(30)  # its marker takes offset 13
    wait_until(lambda: kafka_broker.latest_offsets(topic) == {0: 14}, 30, "marker written")
    assert kafka_faults.compact_now(topic) == {0: 14}
    assert _read(kafka_broker, topic) == [
        (8, b"b", b"b2"),
        (9, b"c", b"c2"),
        (10, b"a", b"t"),
        (12, *MARKER),
        (14, *MARKER),
    ]


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_a_compressed_batch_the_cleaner_rewrote_reads_in_java_and_librdkafka(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults, codec: str
) -> None:
    # One batch a0, b0, a1: the cleaner drops a0 and writes b0 and a1 back compressed
    # with the same codec, offsets and headers kept.
    topic = kafka_topic(config=COMPACT)
    producer = Producer(
        {**kafka_broker.client_config(), "compression.type": codec, "linger.ms": 200}
    )
    for key, value in ((b"a", b"a0"), (b"b", b"b0"), (b"a", b"a1")):
        producer.produce(topic, value, key=key, partition=0, headers=[("h", value)])
    producer.flush(30)

    kafka_faults.compact_now(topic)

    expected = [(1, b"b", b"b0"), (2, b"a", b"a1"), (3, *MARKER)]
    assert _read_uncommitted(kafka_broker, topic) == expected
    prop = tool_option(CONSOLE_CONSUMER, "--property")
    consumed = run_kafka_tool(
        CONSOLE_CONSUMER,
        ["--bootstrap-server", kafka_broker.bootstrap_servers, "--topic", topic,
         "--from-beginning", "--max-messages", "3", "--timeout-ms", "30000",
         prop, "print.key=true", prop, "print.offset=true", prop, "print.headers=true"],
        timeout_s=90,
    )  # fmt: skip
    assert consumed.stdout.splitlines() == [
        "Offset:1\th:b0\tb\tb0",
        "Offset:2\th:a1\ta\ta1",
        f"Offset:3\tNO_HEADERS\t{COMPACT_NOW_KEY.decode()}\tnull",
    ], consumed.stderr


def test_the_broker_compacts_on_its_own_once_a_segment_rolls(
    kafka_broker: Broker, kafka_topic: Callable[..., str]
) -> None:
    # No compact_now: the settings the Spark job used. The rounds share one
    # timestamp a second old, so they fill one segment; d (timestamped now) rolls it
    # and the cleaner, on its own schedule (500 ms backoff on both), compacts it.
    topic = kafka_topic(config={**COMPACT, "segment.ms": 100, "min.cleanable.dirty.ratio": 0.01})
    _rounds(kafka_broker, topic, 3, timestamp_ms=int(time.time() * 1000) - 1000)
    kafka_broker.produce([Record(topic=topic, key=b"d", value=b"d0")])

    expected = [(6, b"a", b"a2"), (7, b"b", b"b2"), (8, b"c", b"c2"), (9, b"d", b"d0")]
    wait_until(lambda: _read(kafka_broker, topic) == expected, 60, f"{topic} compacted", 0.5)


def test_max_compaction_lag_makes_the_cleaner_take_a_barely_dirty_log(
    kafka_broker: Broker, kafka_topic: Callable[..., str], kafka_faults: Faults
) -> None:
    # After a first pass 30 clean records outweigh the one update behind it, far
    # below min.cleanable.dirty.ratio=0.99; max.compaction.lag.ms=1 has the cleaner
    # take the log anyway once z rolls the segment holding the update.
    topic = kafka_topic(
        config={
            **COMPACT,
            "min.cleanable.dirty.ratio": 0.99,
            "max.compaction.lag.ms": 1,
            "segment.ms": 60_000,
        }
    )
    now = int(time.time() * 1000)
    kafka_broker.produce(
        Record(topic=topic, key=f"k{i}".encode(), value=b"v" * 20, timestamp_ms=now - 10_000)
        for i in range(30)
    )
    kafka_faults.compact_now(topic)  # the marker at 30 starts the active segment
    # Later timestamps follow the broker's clock, read from the marker: the session's
    # emulator clock runs ahead of this process's once a test has advanced it, and z
    # must be segment.ms past the segment's first timestamp to roll it.
    marked = next(r.timestamp_ms for r in kafka_broker.consume(topic) if r.offset == 30)
    assert marked is not None
    kafka_broker.produce([Record(topic=topic, key=b"k0", value=b"new", timestamp_ms=marked)])
    kafka_broker.produce([Record(topic=topic, key=b"z", value=b"z", timestamp_ms=marked + 120_000)])

    def k0_updated() -> bool:
        return _read(kafka_broker, topic)[0] == (1, b"k1", b"v" * 20)

    wait_until(k0_updated, 60, f"the cleaner took {topic} for its max compaction lag", 0.5)
    assert _read(kafka_broker, topic)[-3:] == [(30, *MARKER), (31, b"k0", b"new"), (32, b"z", b"z")]


@pytest.mark.parametrize(
    ("config", "why"),
    [
        (
            {"segment.bytes": 1000},
            "Invalid value 1000 for configuration segment.bytes: Value must be at least 1048576",
        ),
        (
            {"min.compaction.lag.ms": 2000, "max.compaction.lag.ms": 1000},
            "conflict topic config setting min.compaction.lag.ms (2000) > "
            "max.compaction.lag.ms (1000)",
        ),
        (
            {"min.cleanable.dirty.ratio": 1.5},
            "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: "
            "Value must be no more than 1",
        ),
    ],
    ids=["segment-bytes-minimum", "lag-conflict", "ratio-above-one"],
)
def test_compaction_settings_kafka_refuses(
    kafka_broker: Broker, kafka_topic: Callable[..., str], config: dict[str, object], why: str
) -> None:
    with pytest.raises(BrokerError) as refused:
        kafka_topic(config=config)
    assert "INVALID_CONFIG" in str(refused.value) and why in str(refused.value)
    # internal.segment.bytes (Kafka's test-only setting) has no such minimum.
    kafka_topic(config={**COMPACT, "internal.segment.bytes": 1000})
