"""A streaming job from Kafka into a Delta table, read back with `file_rows(..., "delta")`.

Delta's jars and session extension must be there when the JVM starts, so this file
starts its own session with `delta_spark_conf()` and runs in a pytest process of its
own: `nox -s spark40` and `nox -s spark35` run it (delta-spark publishes no release
for PySpark 4.2.1 on the registries this project's machines reach; see constraints).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession, functions as F

from kafkatest.assertions import assert_exactly_once
from kafkatest.jars.coordinates import SparkBuild
from kafkatest.seeding import seed
from kafkatest.sinks import file_rows
from kafkatest.sinks.delta import DELTA_EXTENSION, delta_coordinate, delta_spark_conf
from kafkatest.spark import wait_for_query
from kafkatest.spark.session import kafka_spark_session, stop_spark_session


def test_delta_jars_follow_delta_and_spark_lines() -> None:
    spark40 = SparkBuild("4.0.0", "2.13", jars_dir=None)  # type: ignore[arg-type]
    spark35 = SparkBuild("3.5.7", "2.12", jars_dir=None)  # type: ignore[arg-type]
    assert delta_coordinate("4.0.1", spark40) == "io.delta:delta-spark_2.13:4.0.1"
    assert delta_coordinate("4.1.0", spark40) == "io.delta:delta-spark_4.0_2.13:4.1.0"
    assert delta_coordinate("3.3.2", spark35) == "io.delta:delta-spark_2.12:3.3.2"


def test_a_delta_release_of_another_spark_line_is_refused(monkeypatch) -> None:
    # pip may pick delta-spark 4.0.1 for PySpark 4.2 (it only asks pyspark>=4.0.0).
    from kafkatest.errors import SetupError
    from kafkatest.sinks import delta

    monkeypatch.setattr(delta.importlib.metadata, "version", lambda name: "4.0.1")
    monkeypatch.setattr(
        delta, "installed_spark", lambda: SparkBuild("4.2.1", "2.13", jars_dir=None)
    )
    with pytest.raises(
        SetupError, match=r"delta-spark 4.0.1 is built for Spark 4.0, but PySpark 4.2.1"
    ):
        delta.delta_spark_conf()


def test_a_delta_release_without_a_jar_for_the_line_names_the_release_to_install(
    monkeypatch,
) -> None:
    # delta-spark 4.4.1 asks pyspark>=4.0.1, so pip installs it beside PySpark 4.0, but
    # Maven has no delta-spark_4.0_2.13:4.4.1: the error names the release line to pin.
    from kafkatest.errors import SetupError
    from kafkatest.jars import maven
    from kafkatest.sinks import delta

    def not_there(coordinates):
        raise maven.ArtifactNotFound(f"Maven could not find {coordinates[0]}")

    monkeypatch.setattr(delta.importlib.metadata, "version", lambda name: "4.4.1")
    monkeypatch.setattr(
        delta, "installed_spark", lambda: SparkBuild("4.0.5", "2.13", jars_dir=None)
    )
    monkeypatch.setattr(delta.maven, "resolve", not_there)
    with pytest.raises(SetupError) as refused:
        delta.delta_spark_conf()
    message = str(refused.value)
    assert "io.delta:delta-spark_4.0_2.13:4.4.1 for PySpark 4.0.5" in message
    assert "'delta-spark==4.0.*' for PySpark 4.0" in message


@pytest.fixture(scope="module")
def delta_spark() -> Iterator[SparkSession]:
    pytest.importorskip(
        "delta", reason="delta-spark is not installed (nox -s spark40 / spark35 run this)"
    )
    running = SparkSession.getActiveSession()
    if running is not None and DELTA_EXTENSION not in running.conf.get("spark.sql.extensions", ""):
        pytest.skip(
            "a SparkSession without Delta already runs in this process, and Delta's jars "
            "must be there when the JVM starts: run this file in its own pytest process"
        )
    session = kafka_spark_session(conf=delta_spark_conf())
    yield session
    stop_spark_session(session)


def test_a_stream_into_delta_reads_back_exactly_once(
    delta_spark, kafka_broker, kafka_topic, checkpoint_dir, tmp_path
) -> None:
    source = kafka_topic(partitions=2)
    seeded = seed(kafka_broker, source, [{"order_id": f"o-{i}", "n": i} for i in range(30)])
    table = tmp_path / "orders"
    query = (
        delta_spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .option("includeHeaders", "true")
        .load()
        .select(
            F.get_json_object(F.col("value").cast("string"), "$.order_id").alias("order_id"),
            F.col("headers"),
        )
        .writeStream.format("delta")
        .option("checkpointLocation", str(checkpoint_dir / "delta"))
        .trigger(availableNow=True)
        .start(str(table))
    )
    wait_for_query(query, timeout_s=180)
    rows = file_rows(delta_spark, table, "delta")
    assert len(rows) == 30
    assert assert_exactly_once(seeded, rows).ok
    # The table's log says one streaming write per micro-batch, nothing else.
    history = delta_spark.sql(f"DESCRIBE HISTORY delta.`{table}`").collect()
    assert {row["operation"] for row in history} == {"STREAMING UPDATE"}
