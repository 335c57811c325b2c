"""Which Maven coordinates match this machine's PySpark, and which Kafka to run.

The connector must match the Spark build exactly in Scala binary version and
minor line, so both are read from the installed PySpark, not configured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kafkatest.config import environment
from kafkatest.errors import SetupError

#: Apache Kafka release run by the `kafka` backend (override: KAFKATEST_KAFKA_VERSION).
DEFAULT_KAFKA_VERSION = "4.3.1"
#: log4j2 binding so the broker logs to its own file (Kafka 4 uses log4j2).
LOG4J_VERSION = "2.24.3"


@dataclass(frozen=True)
class SparkBuild:
    """The installed PySpark: its version, Scala binary version and bundled jars."""

    version: str
    scala_binary: str
    jars_dir: Path

    @property
    def minor_line(self) -> tuple[int, int]:
        major, minor = self.version.split(".")[:2]
        return int(major), int(minor)

    @property
    def patch(self) -> int:
        match = re.match(r"\d+\.\d+\.(\d+)", self.version)
        return int(match.group(1)) if match else 0


def installed_spark() -> SparkBuild:
    """Read version and Scala binary version off the installed PySpark."""
    try:
        import pyspark
    except ImportError as exc:  # pragma: no cover - pyspark is a dependency
        raise SetupError("pyspark is not installed: pip install 'pyspark>=3.5,<4.3'") from exc
    jars_dir = Path(pyspark.__file__).parent / "jars"
    scala = None
    for jar in jars_dir.glob("spark-core_*.jar"):
        match = re.match(r"spark-core_(\d+\.\d+)-", jar.name)
        if match:
            scala = match.group(1)
    if scala is None:
        raise SetupError(
            f"cannot tell the Scala version of the installed PySpark: no spark-core jar in "
            f"{jars_dir}. Reinstall pyspark (pip install --force-reinstall pyspark)."
        )
    version = pyspark.__version__.split("+")[0].split(".dev")[0]
    return SparkBuild(version=version, scala_binary=scala, jars_dir=jars_dir)


#: Spark's Kafka connector (Structured Streaming's `kafka` source and sink).
KAFKA_CONNECTOR = "spark-sql-kafka-0-10"
#: Spark Connect's server (its `SparkConnectPlugin`): PySpark's pip package ships it
#: from 4.0 on; for 3.5 it is resolved like the connector (warm mode, `--spark-remote`).
CONNECT_SERVER = "spark-connect"


def spark_module_coordinate(
    artifact: str, version: str | None = None, spark: SparkBuild | None = None
) -> str:
    """`org.apache.spark:<artifact>_<scala>:<version>`: one of Spark's own modules, built
    for the installed PySpark's Scala binary version (and its version unless told)."""
    spark = spark or installed_spark()
    return f"org.apache.spark:{artifact}_{spark.scala_binary}:{version or spark.version}"


def spark_connector_coordinate(version: str | None = None, spark: SparkBuild | None = None) -> str:
    """`org.apache.spark:spark-sql-kafka-0-10_<scala>:<version>` for the installed Spark."""
    return spark_module_coordinate(KAFKA_CONNECTOR, version, spark)


def spark_ships(artifact: str, spark: SparkBuild) -> bool:
    """Whether the installed PySpark's own jars hold one of Spark's modules (a second
    copy on the class path would conflict with it)."""
    return any(spark.jars_dir.glob(f"{artifact}_{spark.scala_binary}-*.jar"))


def connector_version_candidates(spark: SparkBuild) -> list[str]:
    """Versions to try, newest first: the exact one, then earlier patches of its line.

    Maven Central sometimes lags PyPI by a patch release; within one minor line the
    connector is binary compatible, so an earlier patch is a safe fallback.
    """
    forced = environment("KAFKATEST_CONNECTOR_VERSION")
    if forced:
        return [forced]
    return patch_candidates(spark)


def patch_candidates(spark: SparkBuild) -> list[str]:
    """The installed PySpark's version, then the earlier patches of its minor line."""
    major, minor = spark.minor_line
    return [spark.version] + [f"{major}.{minor}.{p}" for p in range(spark.patch - 1, -1, -1)]


def kafka_version() -> str:
    return environment("KAFKATEST_KAFKA_VERSION", DEFAULT_KAFKA_VERSION)


def release_tuple(version: str) -> tuple[int, ...]:
    """`4.3.1` -> (4, 3, 1): a release's numbers, compared as numbers (4.10 > 4.9)."""
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def kafka_broker_coordinates(version: str | None = None) -> list[str]:
    """The broker, its command-line tools, and a log4j2 backend."""
    version = version or kafka_version()
    return [
        f"org.apache.kafka:kafka_2.13:{version}",
        f"org.apache.kafka:kafka-tools:{version}",
        f"org.apache.logging.log4j:log4j-slf4j-impl:{LOG4J_VERSION}",
        f"org.apache.logging.log4j:log4j-core:{LOG4J_VERSION}",
    ]
