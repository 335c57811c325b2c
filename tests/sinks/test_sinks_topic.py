"""Reading a sink topic back, by client and through Spark, and asserting on it."""

from __future__ import annotations

import pytest

from kafkatest.assertions import DeliveryAssertionError, assert_at_least_once, assert_exactly_once
from kafkatest.seeding import seed
from kafkatest.sinks import rows_of, topic_frame, topic_rows

ORDERS = [{"order_id": f"o-{i}", "user": f"u{i % 4}", "total": i * 1.5} for i in range(30)]


def test_topic_rows_read_every_partition_decoded(kafka_broker, kafka_topic):
    topic = kafka_topic(partitions=3)
    seeded = seed(kafka_broker, topic, ORDERS, key_field="user", id_field="order_id")
    rows = topic_rows(kafka_broker, topic)
    assert {row["partition"] for row in rows} == {0, 1, 2}
    first = next(row for row in rows if row["headers"]["kafkatest.id"] == "o-5")
    assert (first["key"], first["value"]) == ("u1", ORDERS[5])
    assert (first["partition"], first["offset"]) == seeded.where("o-5")[1:]
    assert assert_exactly_once(seeded, rows).ok
    raw = topic_rows(kafka_broker, topic, key="bytes", value="str", headers="bytes")
    assert raw[0]["key"].startswith(b"u") and raw[0]["value"].startswith('{"order_id"')


def test_topic_frame_parses_json_values(spark, kafka_broker, kafka_topic):
    topic = kafka_topic(partitions=2)
    seed(kafka_broker, topic, ORDERS, key_field="user")
    frame = topic_frame(spark, kafka_broker, topic, value="json")
    assert frame.count() == 30
    assert {"key", "value", "partition", "offset", "headers"} <= set(frame.columns)
    totals = sorted(row["value"]["total"] for row in rows_of(frame))
    assert totals == sorted(order["total"] for order in ORDERS)
    typed = topic_frame(spark, kafka_broker, topic, value="json", value_schema="total DOUBLE")
    assert typed.schema["value"].dataType.simpleString() == "struct<total:double>"


def test_a_spark_copy_job_is_checked_end_to_end(spark, kafka_broker, kafka_topic):
    source, sink = kafka_topic(partitions=2), kafka_topic(partitions=2)
    seeded = seed(kafka_broker, source, ORDERS, key_field="user", id_field="order_id")

    def copy(keep: str) -> None:
        (
            spark.read.format("kafka")
            .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
            .option("subscribe", source)
            .option("includeHeaders", "true")
            .load()
            .where(keep)
            .selectExpr("key", "value", "headers")
            .write.format("kafka")
            .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
            .option("topic", sink)
            .save()
        )

    copy("true")
    copy("offset < 2")  # a replayed slice: at-least-once still holds
    report = assert_at_least_once(seeded, topic_rows(kafka_broker, sink))
    assert len(report.duplicated) == sum(1 for record in seeded if record.offset < 2) >= 2

    lossy = kafka_topic(partitions=1)
    sink = lossy
    copy("NOT (partition = 0 AND offset = 3)")
    with pytest.raises(DeliveryAssertionError) as caught:
        assert_at_least_once(seeded, topic_rows(kafka_broker, lossy))
    lost = seeded.ids_in(0, [3])
    assert f"missing: 1\n  - id {lost[0]} from {source}[0]@3 " in str(caught.value)
