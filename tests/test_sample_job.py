"""The sample job end to end: real Spark, the real connector, the session's broker."""

from __future__ import annotations

import json
import time

import orders_enrichment as job

from kafkatest import Broker, Record
from kafkatest.spark import wait_for_query

# Recent, explicit timestamps: older ones would be aged out by the default 7-day
# retention (on real Kafka and, faithfully, on the emulator).
T0 = (int(time.time()) - 3600) * 1000


def seed_orders(broker: Broker, topic: str) -> list[Record]:
    """Orders across three partitions with keys, headers and explicit timestamps,
    plus one record that is not an order and must be dropped."""
    records = [
        Record.make(
            topic,
            {"order_id": f"o-{i}", "customer": f"c-{i % 4}", "amount": 10.0 + i, "currency": cur},
            key=f"o-{i}",
            headers={"source": "web" if i % 2 else "mobile", "trace": f"t-{i}"},
            partition=i % 3,
            timestamp_ms=T0 + i,
        )
        for i, cur in zip(range(12), ["EUR", "USD", "gbp"] * 4, strict=True)
    ]
    records.append(Record.make(topic, b"not json", key="junk", partition=0, timestamp_ms=T0))
    placed = broker.produce(records)
    assert len(placed) == 13
    return placed


def check_sink(broker: Broker, sink: str) -> None:
    out = broker.consume(sink)
    by_key = {r.key_text(): r for r in out}
    assert sorted(by_key) == sorted(f"o-{i}" for i in range(12)), "junk dropped, every order once"
    assert len(out) == 12
    usd = json.loads(by_key["o-1"].value)
    assert usd == {
        "order_id": "o-1",
        "customer": "c-1",
        "amount": 11.0,
        "currency": "USD",
        "amount_eur": 9.9,
        "source": "web",
    }
    gbp = json.loads(by_key["o-2"].value)
    assert (gbp["currency"], gbp["amount_eur"], gbp["source"]) == ("GBP", 14.4, "mobile")
    headers = dict(by_key["o-5"].headers)
    assert headers == {"source": b"web", "trace": b"t-5", "processed-by": b"orders-enrichment"}


def test_streaming_available_now(spark, kafka_broker, kafka_topic, checkpoint_dir) -> None:
    source, sink = kafka_topic(partitions=3), kafka_topic(partitions=2)
    seed_orders(kafka_broker, source)
    query = job.start_stream(
        spark, kafka_broker.bootstrap_servers, source, sink, str(checkpoint_dir)
    )
    wait_for_query(query, timeout_s=180)
    check_sink(kafka_broker, sink)
    progress = query.lastProgress
    assert progress is not None
    end = progress["sources"][0]["endOffset"]
    # PySpark 4 keeps a source's offsets as Spark's JSON text; 3.5's dict has them parsed.
    end = json.loads(end) if isinstance(end, str) else end
    assert end == {source: {"0": 5, "1": 4, "2": 4}}


def test_streaming_resumes_from_checkpoint(
    spark, kafka_broker, kafka_topic, checkpoint_dir
) -> None:
    """A second AvailableNow run reads only what arrived since the first."""
    source, sink = kafka_topic(partitions=3), kafka_topic()
    seed_orders(kafka_broker, source)
    wait_for_query(
        job.start_stream(spark, kafka_broker.bootstrap_servers, source, sink, str(checkpoint_dir))
    )
    kafka_broker.produce(
        [
            Record.make(
                source,
                {"order_id": "late", "customer": "c", "amount": 1.0, "currency": "EUR"},
                key="late",
            )
        ]
    )
    wait_for_query(
        job.start_stream(spark, kafka_broker.bootstrap_servers, source, sink, str(checkpoint_dir))
    )
    keys = [r.key_text() for r in kafka_broker.consume(sink)]
    assert len(keys) == 13 and keys.count("late") == 1


def test_batch(spark, kafka_broker, kafka_topic) -> None:
    source, sink = kafka_topic(partitions=3), kafka_topic(partitions=1)
    seed_orders(kafka_broker, source)
    job.run_batch(spark, kafka_broker.bootstrap_servers, source, sink)
    check_sink(kafka_broker, sink)


def test_batch_source_columns_are_byte_exact(spark, kafka_broker, kafka_topic) -> None:
    """What Spark's source shows (partition, offset, timestamp, headers) is what was seeded."""
    source = kafka_topic(partitions=3)
    placed = seed_orders(kafka_broker, source)
    rows = job.read_orders(spark, kafka_broker.bootstrap_servers, source, streaming=False).collect()
    seen = {(r.partition, r.offset): r for r in rows}
    assert len(seen) == len(placed)
    for record in placed:
        row = seen[(record.partition, record.offset)]
        assert bytes(row.value) == record.value and bytes(row.key) == record.key
        assert int(row.timestamp.timestamp() * 1000) == record.timestamp_ms
        assert [(h.key, bytes(h.value)) for h in row.headers or []] == list(record.headers)
