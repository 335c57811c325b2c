"""The two jar sets kafkatest needs, with the user's overrides applied."""

from __future__ import annotations

import os
from pathlib import Path

from kafkatest.errors import SetupError
from kafkatest.jars import maven
from kafkatest.jars.coordinates import (
    SparkBuild,
    connector_version_candidates,
    installed_spark,
    kafka_broker_coordinates,
    spark_connector_coordinate,
)


def _jars_in(directory: str) -> list[Path]:
    path = Path(directory).expanduser()
    jars = sorted(path.glob("*.jar"))
    if not jars:
        raise SetupError(f"KAFKATEST_JARS_DIR={directory} holds no .jar files")
    return jars


def _artifact_id(jar: Path) -> str:
    """`kafka-clients-3.9.2.jar` -> `kafka-clients` (name up to the version)."""
    stem = jar.stem
    parts = stem.split("-")
    for index, part in enumerate(parts):
        if part[:1].isdigit():
            return "-".join(parts[:index])
    return stem


def without_spark_provided(jars: list[Path], spark: SparkBuild) -> list[Path]:
    """Drop jars PySpark already ships (slf4j, lz4, snappy...): two copies conflict."""
    bundled = {_artifact_id(j) for j in spark.jars_dir.glob("*.jar")}
    return [j for j in jars if _artifact_id(j) not in bundled]


def spark_connector_jars(quiet: bool = False) -> list[Path]:
    """The spark-sql-kafka-0-10 connector and its dependencies for the installed PySpark."""
    override = os.environ.get("KAFKATEST_SPARK_JARS_DIR") or os.environ.get("KAFKATEST_JARS_DIR")
    if override:
        return _jars_in(override)
    spark = installed_spark()
    tried: list[str] = []
    for version in connector_version_candidates(spark):
        coordinate = spark_connector_coordinate(version, spark)
        tried.append(coordinate)
        try:
            return without_spark_provided(maven.resolve([coordinate], quiet=quiet), spark)
        except maven.ArtifactNotFound:
            continue
    raise SetupError(
        f"no Spark Kafka connector for PySpark {spark.version} was found on Maven Central "
        f"(tried {', '.join(tried)}). Install a PySpark whose connector is published "
        "(pip install 'pyspark>=3.5,<4.3'), set KAFKATEST_CONNECTOR_VERSION, or point "
        "KAFKATEST_SPARK_JARS_DIR at a directory holding the connector jars."
    )


def kafka_broker_jars(version: str | None = None, quiet: bool = False) -> list[Path]:
    """Apache Kafka's broker and tools (KRaft), to run real Kafka without Docker."""
    override = os.environ.get("KAFKATEST_KAFKA_JARS_DIR")
    if override:
        return _jars_in(override)
    return maven.resolve(kafka_broker_coordinates(version), quiet=quiet)
