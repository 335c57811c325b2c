from pyspark.sql import functions as F

from kafkatest.assertions import assert_at_least_once
from kafkatest.seeding import seed
from kafkatest.sinks import BatchCapture, file_rows, memory_rows
from kafkatest.spark import wait_for_query


def test_the_same_stream_read_back_from_three_sinks(
    spark, kafka_broker, kafka_topic, checkpoint_dir, tmp_path
):
    source = kafka_topic(partitions=2)
    seeded = seed(kafka_broker, source, [{"order_id": f"o-{i}", "n": i} for i in range(20)])
    orders = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .option("includeHeaders", "true")
        .load()
        .select(
            F.get_json_object(F.col("value").cast("string"), "$.order_id").alias("order_id"),
            F.col("headers"),
        )
    )

    # foreachBatch: BatchCapture keeps every batch's rows with their batch_id.
    capture = BatchCapture()
    query = (
        orders.writeStream.foreachBatch(capture)
        .option("checkpointLocation", str(checkpoint_dir / "capture"))
        .trigger(availableNow=True)
        .start()
    )
    wait_for_query(query, timeout_s=120)  # raises the query's error; stops it after 120 s
    assert capture.batch_ids == sorted(set(capture.batch_ids))  # no batch was replayed
    assert sum(len(rows) for rows in capture.batches().values()) == len(capture.rows) == 20
    assert capture.frame(spark).count() == 20  # the rows again, as a DataFrame
    assert_at_least_once(seeded, capture.rows)  # the kafkatest.id header traces each row

    # The memory sink, read by its query name.
    query = (
        orders.writeStream.format("memory")
        .queryName("orders_seen")
        .option("checkpointLocation", str(checkpoint_dir / "memory"))
        .trigger(availableNow=True)
        .start()
    )
    wait_for_query(query)
    assert_at_least_once(seeded, memory_rows(spark, "orders_seen"))

    # Files: parquet, json or csv (delta with delta-spark), read back as dicts.
    query = (
        orders.writeStream.format("parquet")
        .option("path", str(tmp_path / "orders"))
        .option("checkpointLocation", str(checkpoint_dir / "files"))
        .trigger(availableNow=True)
        .start()
    )
    wait_for_query(query)
    assert_at_least_once(seeded, file_rows(spark, tmp_path / "orders", "parquet"))
