"""Hypothesis streams: what they draw, and an oracle run per example on one SparkSession."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import given, settings
from oracle_jobs import dedup_stateful
from pyspark.sql import SparkSession

from kafkatest.brokers.base import Broker
from kafkatest.oracles import assert_split_invariant
from kafkatest.oracles.strategies import POISON, oracle_settings, record_streams

#: The oracles' own logic: the broker only feeds the job. The docs example
#: (test_docs_example.py) and the catch matrix run the oracles on real Kafka too.
pytestmark = pytest.mark.kafka_backends("emulator")


def _seconds(record: dict[str, Any]) -> float:
    ts = record["value"]["ts"]
    return dt.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


@settings(max_examples=200, deadline=None)
@given(stream=record_streams(keys=("a", "b"), out_of_order_s=20, late_s=None, duplicates=False))
def test_without_late_records_a_stream_is_out_of_order_within_its_bound(
    stream: list[dict[str, Any]],
) -> None:
    assert 1 <= len(stream) <= 12
    assert {r["key"] for r in stream} <= {"a", "b"}
    latest = float("-inf")
    for record in stream:
        assert latest - _seconds(record) <= 20
        latest = max(latest, _seconds(record))


@settings(max_examples=200, deadline=None)
@given(stream=record_streams(poison=True))
def test_a_duplicate_is_an_exact_copy(stream: list[dict[str, Any]]) -> None:
    events = [r for r in stream if r["value"] != POISON]
    ids = [r["value"]["payment_id"] for r in events]
    for rid in {i for i in ids if ids.count(i) > 1}:
        copies = [r for r in events if r["value"]["payment_id"] == rid]
        assert all(c == copies[0] for c in copies)


def test_the_strategies_draw_each_kind_of_trouble() -> None:
    seen: set[str] = set()

    @settings(max_examples=300, deadline=None, database=None)
    @given(stream=record_streams(poison=True, max_size=20))
    def collect(stream: list[dict[str, Any]]) -> None:
        events = [r for r in stream if r["value"] != POISON]
        if len(events) < len(stream):
            seen.add("poison")
        ids = [r["value"]["payment_id"] for r in events]
        if len(set(ids)) < len(ids):
            seen.add("duplicate")
        times = [_seconds(r) for r in events]
        if any(max(times[:i]) - t >= 180 for i, t in enumerate(times) if i):
            seen.add("late")
        if any(max(times[:i]) > t for i, t in enumerate(times) if i):
            seen.add("out of order")

    collect()
    assert seen == {"poison", "duplicate", "late", "out of order"}


@given(stream=record_streams(keys=("a", "b"), max_size=8))
@oracle_settings()
def test_stateful_dedup_is_split_invariant_on_drawn_streams(
    spark: SparkSession, kafka_broker: Broker, stream: list[dict[str, Any]]
) -> None:
    assert_split_invariant(
        dedup_stateful, stream, spark=spark, broker=kafka_broker, splits=(None, 2), partitions=2
    )
