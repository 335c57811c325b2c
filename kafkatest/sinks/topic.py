"""Read back what a job wrote to a Kafka topic: every partition, to its current end."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafkatest.brokers.client import ClientOperations
from kafkatest.sinks.decode import DECODINGS, Decoding, record_row

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType


def topic_rows(
    broker: ClientOperations,
    topic: str,
    *,
    key: Decoding | str = "str",
    value: Decoding | str = "json",
    headers: Decoding = "str",
    timeout_s: float = 30.0,
    schema_registry: Any = None,
) -> list[dict[str, Any]]:
    """Rows of `topic` ordered by partition then offset, decoded as asked.

    Each row has topic, partition, offset, timestamp_ms, key, value and headers
    (a dict); the end of each partition is fixed when the call starts.
    ``value="avro"`` (``"protobuf"``, ``"json-schema"``; `key` likewise) decodes
    Confluent-framed data with the schemas in `schema_registry` (its URL or the
    fixture); a record that does not decode is kept as its bytes.
    """
    from kafkatest.sinks.framed import FRAMED, framed_decoder

    decoders = {
        name: framed_decoder(how, schema_registry, topic, is_key=name == "key")
        for name, how in (("key", key), ("value", value))
        if how in FRAMED
    }
    rows = []
    for record in broker.consume(topic, timeout_s=timeout_s):
        row = record_row(
            record,
            key="bytes" if "key" in decoders else key,  # type: ignore[arg-type]
            value="bytes" if "value" in decoders else value,  # type: ignore[arg-type]
            headers=headers,
        )
        for name, decoder in decoders.items():
            row[name] = decoder(row[name])
        rows.append(row)
    return rows


def topic_frame(
    spark: SparkSession,
    broker: ClientOperations,
    topic: str,
    *,
    key: Decoding = "str",
    value: Decoding = "str",
    value_schema: StructType | str | None = None,
    options: dict[str, str] | None = None,
) -> DataFrame:
    """`topic` as a DataFrame through Spark's own Kafka batch source.

    Reading with the connector the job uses shows exactly what a downstream
    Spark job would see. Headers come as Spark gives them (array of key/value
    structs). ``value="json"`` parses the value with `value_schema` into a
    ``value`` struct (the schema is inferred from the data when not given).
    """
    from pyspark.sql import functions as F

    for name, how in (("key", key), ("value", value)):
        if how not in DECODINGS:
            raise ValueError(f"decode {name} as one of {DECODINGS}, not {how!r}")
    reader = (
        spark.read.format("kafka")
        # The broker's own options: on a secured broker, its admin login and CA.
        .options(**broker.spark_options())
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
        .option("includeHeaders", "true")
    )
    for option, setting in (options or {}).items():
        reader = reader.option(option, setting)
    frame = reader.load().withColumnRenamed("timestamp", "kafka_timestamp")
    if key != "bytes":
        frame = frame.withColumn("key", F.col("key").cast("string"))
    if value != "bytes":
        frame = frame.withColumn("value", F.col("value").cast("string"))
    if value == "json":
        schema = value_schema or _inferred_schema(spark, frame)
        frame = frame.withColumn("value", F.from_json("value", schema))
    return frame.orderBy("partition", "offset")


def _inferred_schema(spark: SparkSession, frame: DataFrame) -> StructType:
    texts = frame.select("value").where("value IS NOT NULL")
    return spark.read.json(texts.rdd.map(lambda row: row[0])).schema
