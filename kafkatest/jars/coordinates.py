"""Which Maven coordinates match this machine's PySpark, and which Kafka to run.

The connector must match the Spark build exactly in Scala binary version and
minor line, so both are read from the installed PySpark, not configured.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kafkatest.config import environment
from kafkatest.errors import SetupError

#: The PySpark releases kafkatest installs with (pyproject.toml's dependency says the same,
#: tests/test_packaging.py holds them together) and the lines in it, oldest and newest.
SUPPORTED_PYSPARK = ">=3.5,<4.4"
OLDEST_LINE = (3, 5)
NEWEST_LINE = (4, 3)
#: What to tell a user whose PySpark is missing or outside the range.
INSTALL_PYSPARK = f"pip install 'pyspark{SUPPORTED_PYSPARK}'"

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
        raise SetupError(f"pyspark is not installed: {INSTALL_PYSPARK}") from exc
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
    """Versions to try, in order: the exact one, the earlier patches of its line, then
    the newest release of each earlier line of its major version, newest line first.

    Maven Central sometimes lags PyPI by a patch release; within one minor line the
    connector is binary compatible, so an earlier patch is a safe fallback. A new line
    (PySpark 4.3.0) may be on PyPI before its connector reaches the Maven repository a
    machine uses: the previous line's connector is then the best there is (PySpark
    4.3.0 runs Spark 4.2.0's, tests/test_spark_lines.py), and the resolver says so.
    """
    forced = environment("KAFKATEST_CONNECTOR_VERSION")
    if forced:
        return [forced]
    return patch_candidates(spark) + earlier_line_candidates(spark)


def earlier_line_candidates(spark: SparkBuild) -> list[str]:
    """A Maven version range per earlier minor line of the installed major that kafkatest
    supports, newest first: the newest release of that line the repository lists.

    `[4.2.0],[4.2.1,4.3.0)`, not `[4.2.0,4.3.0)`: Maven orders a preview after its
    release (4.2.0-preview5 > 4.2.0), and a range over the whole line picked 4.2.0's
    last preview, whose parent POM the repository lacks. Previews of later patches do
    not exist (Spark publishes previews of a line's first release only).
    """
    major, minor = spark.minor_line
    lines = [(major, m) for m in range(minor - 1, -1, -1) if (major, m) >= OLDEST_LINE]
    return [f"[{a}.{m}.0],[{a}.{m}.1,{a}.{m + 1}.0)" for a, m in lines]


def connector_release(jars: Sequence[Path], spark: SparkBuild) -> str | None:
    """The connector release a resolved jar list holds (`4.2.0` for a line's range)."""
    prefix = f"{KAFKA_CONNECTOR}_{spark.scala_binary}-"
    for jar in jars:
        if jar.name.startswith(prefix) and jar.suffix == ".jar":
            return jar.name[len(prefix) : -len(".jar")]
    return None


def is_line_fallback(version: str) -> bool:
    """Whether a connector version from `connector_version_candidates` is another line's."""
    return version.startswith("[")


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
