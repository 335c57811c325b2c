"""Spark's Kafka connector (Java kafka-clients) against the emulator.

The most demanding client: ApiVersions negotiation, Metadata with topic ids,
Admin listOffsets (earliest/latest/by timestamp), assign+seek fetches with
sessions declined, OffsetForLeaderEpoch, and an idempotent producer.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.records import Record

pytestmark = pytest.mark.spark

# Recent: timestamps older than the 7-day default retention would be aged out.
BASE_TS = (int(time.time()) - 3600) * 1000


# `spark` is the plugin's shared session: a private one would stop it for everyone.


def _read(spark: object, emulator: EmulatorBroker, topic: str, **options: str) -> list[object]:
    reader = (
        spark.read.format("kafka")  # type: ignore[attr-defined]
        .option("kafka.bootstrap.servers", emulator.bootstrap_servers)
        .option("subscribe", topic)
        .option("includeHeaders", "true")
    )
    for key, value in options.items():
        reader = reader.option(key, value)
    return sorted(reader.load().collect(), key=lambda r: (r.partition, r.offset))


def test_batch_read_sees_exact_records(
    spark: object, emulator: EmulatorBroker, new_topic: Callable[[], str]
) -> None:
    topic = new_topic()
    emulator.create_topic(topic, partitions=3)
    placed = emulator.produce(
        Record.make(topic, f"v{i}", key=f"k{i}", headers={"h": str(i)}, timestamp_ms=BASE_TS + i)
        for i in range(300)
    )
    rows = _read(spark, emulator, topic)
    expected = sorted(placed, key=lambda r: (r.partition, r.offset))
    assert [(r.partition, r.offset) for r in rows] == [(r.partition, r.offset) for r in expected]
    assert [bytes(r.value) for r in rows] == [r.value for r in expected]
    assert [bytes(r.key) for r in rows] == [r.key for r in expected]
    assert [int(r.timestamp.timestamp() * 1000) for r in rows] == [r.timestamp_ms for r in expected]
    assert [[(h.key, bytes(h.value)) for h in r.headers] for r in rows] == [
        list(r.headers) for r in expected
    ]
    later = _read(spark, emulator, topic, startingTimestamp=str(BASE_TS + 150))
    assert sorted(bytes(r.value) for r in later) == sorted(
        f"v{i}".encode() for i in range(150, 300)
    )


@pytest.mark.parametrize("codec", ["none", "snappy", "zstd"])
def test_sink_write_then_read_back(
    spark: object, emulator: EmulatorBroker, new_topic: Callable[[], str], codec: str
) -> None:
    topic = new_topic()
    emulator.create_topic(topic, partitions=2)
    frame = spark.createDataFrame(  # type: ignore[attr-defined]
        [(f"k{i}", f"value-{i}") for i in range(500)], ["key", "value"]
    )
    (
        frame.write.format("kafka")
        .option("kafka.bootstrap.servers", emulator.bootstrap_servers)
        .option("kafka.compression.type", codec)
        .option("topic", topic)
        .save()
    )
    got = emulator.consume(topic)
    assert sorted(r.value for r in got) == sorted(f"value-{i}".encode() for i in range(500))
    # A timestamp lookup decodes the Java producer's compressed batches.
    first_ts = min(r.timestamp_ms for r in got if r.timestamp_ms is not None)
    assert len(_read(spark, emulator, topic, startingTimestamp=str(first_ts))) == 500
