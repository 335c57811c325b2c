"""A SparkSession that can read (and write) Delta tables, for jobs with a Delta sink.

Delta is two things: the `delta-spark` Python package and its jars, which must be on
the JVM's class path and registered as a session extension when the JVM starts (a
running session cannot take them). `delta_spark_conf` resolves the jars that match
the installed delta-spark and PySpark through kafkatest's Maven cache, next to the
Kafka connector's, and gives the settings to start the session with.
"""

from __future__ import annotations

import importlib.metadata

from kafkatest.errors import SetupError
from kafkatest.jars import maven, spark_connector_jars
from kafkatest.jars.coordinates import SparkBuild, installed_spark
from kafkatest.jars.resolve import without_spark_provided

DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
INSTALL_HINT = (
    "install the delta-spark release line built for your PySpark line, e.g. "
    "pip install 'delta-spark==3.3.*' for PySpark 3.5, 'delta-spark==4.0.*' for PySpark 4.0 "
    "(pip may otherwise pick a newer delta-spark that accepts PySpark but publishes no jar "
    "for its line)"
)


def delta_coordinate(delta_version: str, spark: SparkBuild) -> str:
    """The Delta jar for `delta_version` on `spark`: from Delta 4.1 the artifact names
    its Spark line (delta-spark_4.0_2.13), before that only its Scala version."""
    major, minor = (int(part) for part in delta_version.split(".")[:2])
    if (major, minor) >= (4, 1):
        line = ".".join(str(part) for part in spark.minor_line)
        return f"io.delta:delta-spark_{line}_{spark.scala_binary}:{delta_version}"
    return f"io.delta:delta-spark_{spark.scala_binary}:{delta_version}"


def _spark_line_of(delta_version: str) -> tuple[int, int] | None:
    """The one Spark line a Delta release before 4.1 is built for (Delta's own
    compatibility table); from 4.1 the artifact names the line, so None."""
    major, minor = (int(part) for part in delta_version.split(".")[:2])
    if (major, minor) >= (4, 1):
        return None
    return (4, 0) if major == 4 else (3, 5) if major == 3 else (3, 4)


def delta_spark_conf() -> dict[str, str]:
    """Settings for `kafka_spark_session(conf=...)`: the connector's and Delta's jars,
    Delta's session extension and catalog."""
    try:
        version = importlib.metadata.version("delta-spark")
    except importlib.metadata.PackageNotFoundError as exc:
        raise SetupError(f"a Delta session needs delta-spark: {INSTALL_HINT}") from exc
    spark = installed_spark()
    line = _spark_line_of(version)
    if line is not None and line != spark.minor_line:
        raise SetupError(
            f"delta-spark {version} is built for Spark {line[0]}.{line[1]}, but PySpark "
            f"{spark.version} is installed: {INSTALL_HINT}"
        )
    coordinate = delta_coordinate(version, spark)
    try:
        delta_jars = without_spark_provided(maven.resolve([coordinate]), spark)
    except maven.ArtifactNotFound as exc:
        raise SetupError(
            f"delta-spark {version} has no jar {coordinate} for PySpark {spark.version} in "
            f"the Maven repositories this machine reaches: {INSTALL_HINT}"
        ) from exc
    jars = [*spark_connector_jars(), *delta_jars]
    return {
        "spark.jars": ",".join(str(jar) for jar in jars),
        "spark.sql.extensions": DELTA_EXTENSION,
        "spark.sql.catalog.spark_catalog": DELTA_CATALOG,
    }
