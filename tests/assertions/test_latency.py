"""`assert_latency`: per-record latency from a record's produce timestamp to its first
copy's in the sink, nearest-rank percentiles, and what it says when the bound or a
record is missed. Timestamps are given, so no assertion here depends on the machine."""

from __future__ import annotations

import time
from typing import Any

import pytest

from kafkatest import Broker, seed
from kafkatest.assertions import LatencyAssertionError, assert_latency, latency_report
from kafkatest.sinks import topic_rows

BASE_MS = 1_760_000_000_000


def _stamped(records: Any, delays: dict[str, int]) -> list[dict[str, Any]]:
    """Sink rows copying `records` (a seed), each `delays[id]` ms after its produce time."""
    return [
        {
            "topic": "out",
            "partition": 0,
            "offset": index,
            "headers": {"kafkatest.id": rid},
            "timestamp_ms": record.timestamp_ms + delays[rid],
        }
        for index, (rid, record) in enumerate(zip(records.ids, records.records, strict=True))
        if rid in delays
    ]


def test_percentiles_are_nearest_rank_over_each_records_own_latency(make_seed) -> None:
    source = make_seed(count=100)
    source = type(source)(
        source.topic,
        tuple(r.at(r.partition or 0, r.offset or 0, BASE_MS + i) for i, r in enumerate(source)),
        source.ids,
        source.id_header,
        source.id_field,
    )
    delays = {rid: i for i, rid in enumerate(source.ids)}  # 0..99 ms
    report = assert_latency(source, _stamped(source, delays), p99_ms=98)
    assert (report.p50_ms, report.p99_ms, report.max_ms) == (49, 98, 99)
    assert report.summary() == "100 records: p50 49 ms, p99 98 ms, max 99 ms"
    assert report.slowest(1)[0].ms == 99 and report.slowest(1)[0].record == "orders[1]@49"
    with pytest.raises(LatencyAssertionError, match=r"p99 98 ms is over the bound of 97 ms") as e:
        assert_latency(source, _stamped(source, delays), p99_ms=97)
    assert "slowest: orders[1]@49 -> out[0]@99: 99 ms" in str(e.value)
    assert e.value.report.p99_ms == 98


def test_a_duplicate_counts_from_its_first_copy_and_a_lost_record_fails(make_seed) -> None:
    source = make_seed(count=10)
    source = type(source)(
        source.topic,
        tuple(r.at(0, i, BASE_MS) for i, r in enumerate(source)),
        source.ids,
        source.id_header,
        source.id_field,
    )
    rows = _stamped(source, dict.fromkeys(source.ids, 5))
    late_copy = {**rows[3], "offset": 50, "timestamp_ms": BASE_MS + 60_000}  # at-least-once
    assert latency_report(source, [late_copy, *rows]).max_ms == 5
    with pytest.raises(LatencyAssertionError, match=r"1 of 10 records never reached the sink"):
        assert_latency(source, rows[:3] + rows[4:], p99_ms=1000)


def test_rows_without_timestamps_are_refused_with_the_reason() -> None:
    expected = [{"n": 1, "timestamp_ms": BASE_MS}]
    with pytest.raises(ValueError, match=r"sink row at row 0 has no timestamp_ms: latency needs"):
        latency_report(expected, [{"n": 1}], on="n")
    with pytest.raises(ValueError, match="over 0 and at most 100"):
        latency_report(expected, [{"n": 1, "timestamp_ms": BASE_MS}], on="n").percentile(0)


def test_latency_from_kafkas_record_timestamps(kafka_broker: Broker, kafka_topic) -> None:
    """On both backends: CreateTime given by the producer is what each side reads back,
    so the latency is exactly the difference the test wrote."""
    source_topic, sink_topic = kafka_topic(partitions=2), kafka_topic(partitions=2)
    base = int(time.time() * 1000) - 3_600_000  # within the topics' retention
    values = [{"n": i} for i in range(20)]
    source = seed(
        kafka_broker,
        source_topic,
        [{"value": v, "timestamp_ms": base + 1000 * i} for i, v in enumerate(values)],
        id_field="n",
    )
    delays = [3 * i for i in range(20)]  # 0..57 ms
    seed(
        kafka_broker,
        sink_topic,
        [{"value": v, "timestamp_ms": base + 1000 * i + delays[i]} for i, v in enumerate(values)],
        id_field="n",
    )
    report = assert_latency(source, topic_rows(kafka_broker, sink_topic), p99_ms=57)
    assert sorted(item.ms for item in report.latencies) == delays
    with pytest.raises(LatencyAssertionError, match="p99 57 ms is over the bound of 50 ms"):
        assert_latency(source, topic_rows(kafka_broker, sink_topic), p99_ms=50)
