"""Jobs and streams for the state tests beside the docs example (test_state_example.py,
whose dedup jobs and clicks they share): a stateless copy of the corpus's clicks
(tests/oracles/corpus), and orders with their payments ten minutes per batch.

Each job follows kafkatest's job contract,
``job(spark, bootstrap, source, sink, checkpoint, *, options)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from corpus.common import clicks, kafka_sink, to_kafka
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery


def copied_clicks(
    spark: SparkSession,
    bootstrap: str,
    source: str,
    sink: str,
    checkpoint: str,
    *,
    options: Mapping[str, str],
) -> StreamingQuery:
    """Stateless: every click copied to the sink."""
    copies = to_kafka(clicks(spark, bootstrap, source, options), "event_id")
    return kafka_sink(copies, bootstrap, sink, checkpoint, options)


def at(seconds: int) -> str:
    """2024-05-01T10:00:00Z plus `seconds`, as ISO text."""
    import datetime as dt

    start = dt.datetime(2024, 5, 1, 10, tzinfo=dt.timezone.utc)
    return (start + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def order_event(kind: str, order: str, seconds: int) -> dict[str, Any]:
    value = {"kind": kind, "order_id": order, "amount": 10.0, "ts": at(seconds)}
    return {"key": order, "value": value}


def order_batch(batch: int) -> list[dict[str, Any]]:
    """Three orders and, two minutes later, their payments; ten minutes of event time
    per batch (the orders corpus job joins a payment within 10 minutes of its order)."""
    out = []
    for n in range(3):
        start = 600 * batch + 60 * n
        out += [order_event("order", f"o{batch}-{n}", start)]
        out += [order_event("payment", f"o{batch}-{n}", start + 120)]
    return out
