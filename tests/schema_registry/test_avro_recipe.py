import json

from confluent_kafka.schema_registry import SchemaRegistryClient
from pyspark.sql import functions as F
from pyspark.sql.avro.functions import from_avro

from kafkatest.seeding import seed

ORDER = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "fields": [{"name": "order_id", "type": "string"}, {"name": "qty", "type": "long"}],
    }
)


def decode_orders(raw, avro_schema):
    """Confluent framing: magic byte 0, a 4-byte schema id, then the Avro body."""
    return raw.select(
        F.conv(F.hex(F.substring("value", 2, 4)), 16, 10).cast("int").alias("schema_id"),
        from_avro(
            F.expr("substring(value, 6, length(value) - 5)"), avro_schema, {"mode": "FAILFAST"}
        ).alias("order"),
    )


def test_a_job_decodes_registry_framed_avro(spark, kafka_broker, kafka_topic, schema_registry):
    topic = kafka_topic()
    orders = [{"order_id": f"o-{i}", "qty": i} for i in range(5)]
    seed(
        kafka_broker,
        topic,
        orders,
        value_format="avro",
        schema=ORDER,
        schema_registry=schema_registry,
    )

    # The job takes the schema the producers registered (TopicNameStrategy's subject).
    latest = SchemaRegistryClient({"url": schema_registry.url}).get_latest_version(f"{topic}-value")
    raw = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
        .option("subscribe", topic)
        .load()
    )
    rows = decode_orders(raw, latest.schema.schema_str).collect()

    assert {row.schema_id for row in rows} == {latest.schema_id}
    decoded = sorted((row.order.asDict() for row in rows), key=lambda o: o["order_id"])
    assert decoded == orders
