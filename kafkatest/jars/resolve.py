"""The jar sets kafkatest needs, with the user's overrides applied."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kafkatest.config import environment
from kafkatest.errors import SetupError
from kafkatest.jars import maven
from kafkatest.jars.coordinates import (
    CONNECT_SERVER,
    INSTALL_PYSPARK,
    KAFKA_CONNECTOR,
    SparkBuild,
    connector_release,
    connector_version_candidates,
    installed_spark,
    is_line_fallback,
    kafka_broker_coordinates,
    patch_candidates,
    spark_module_coordinate,
    spark_ships,
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
    """The spark-sql-kafka-0-10 connector and its dependencies for the installed PySpark.

    When the installed line's connector is not on the Maven repository reached and an
    earlier line's is used instead, one line says so, in the run that decided it (later
    runs find the decision cached and say nothing; `kafkatest doctor` shows it).
    """
    override = environment("KAFKATEST_SPARK_JARS_DIR") or environment("KAFKATEST_JARS_DIR")
    if override:
        return _jars_in(override)
    spark = installed_spark()
    found = _first_published(KAFKA_CONNECTOR, connector_version_candidates(spark), spark, quiet)
    if isinstance(found, Published):
        if is_line_fallback(found.asked) and found.maven_said_missing and not quiet:
            print(f"kafkatest: {line_fallback_notice(spark, found.jars)}", file=sys.stderr)
        return found.jars
    raise SetupError(
        f"no Spark Kafka connector for PySpark {spark.version} was found on Maven Central "
        f"(tried {found}). Install a PySpark whose connector is published "
        f"({INSTALL_PYSPARK}), set KAFKATEST_CONNECTOR_VERSION, or point "
        "KAFKATEST_SPARK_JARS_DIR at a directory holding the connector jars."
    )


def line_fallback_notice(spark: SparkBuild, jars: Sequence[Path]) -> str:
    """What a user is told (once) and `kafkatest doctor` shows when another line's
    connector serves the installed PySpark."""
    major, minor = spark.minor_line
    return (
        f"PySpark {spark.version} runs with the Kafka connector "
        f"{connector_release(jars, spark) or 'of an earlier line'}: no {major}.{minor} "
        "connector is on the Maven repository reached, and this is the newest earlier "
        "line's that is (KAFKATEST_CONNECTOR_VERSION picks another)"
    )


def spark_connect_server_jars(quiet: bool = False) -> list[Path]:
    """Spark Connect's server for the installed PySpark, when PySpark lacks it; else [].

    PySpark 4's pip package ships `spark-connect_2.13`; 3.5's does not, and its server
    (one shaded jar, gRPC inside) comes from Maven Central as the connector does: the
    installed version, else an earlier patch of its line. A KAFKATEST_SPARK_JARS_DIR
    that holds it already puts it on the class path with the connector.
    """
    spark = installed_spark()
    if spark_ships(CONNECT_SERVER, spark):
        return []
    override = environment("KAFKATEST_SPARK_JARS_DIR") or environment("KAFKATEST_JARS_DIR")
    if override and any(j.name.startswith(f"{CONNECT_SERVER}_") for j in _jars_in(override)):
        return []
    found = _first_published(CONNECT_SERVER, patch_candidates(spark), spark, quiet)
    if isinstance(found, Published):
        return found.jars
    raise SetupError(
        f"PySpark {spark.version} does not ship Spark Connect's server, and no "
        f"{spark_module_coordinate(CONNECT_SERVER, spark=spark)} was found on Maven Central "
        f"(tried {found}). Install a PySpark whose Connect server is published "
        f"({INSTALL_PYSPARK}), or put its jar in KAFKATEST_SPARK_JARS_DIR."
    )


@dataclass(frozen=True)
class Published:
    """The jars of the first version of a Spark module that Maven found."""

    jars: list[Path]
    #: The version asked for (a release, or a line's range: `is_line_fallback`).
    asked: str
    #: Whether Maven, run this time, found none of the versions tried before it (a
    #: remembered answer ran no Maven: the choice was made, and said, before).
    maven_said_missing: bool


def _first_published(
    artifact: str, versions: Sequence[str], spark: SparkBuild, quiet: bool
) -> Published | str:
    """The jars of the first of `versions` of a Spark module Maven finds, without those
    PySpark ships; or, when none is found, what was tried and why (for the error)."""
    skipped: list[str] = []
    fresh = False
    for version in versions:
        coordinate = spark_module_coordinate(artifact, version, spark)
        try:
            jars = without_spark_provided(maven.resolve([coordinate], quiet=quiet), spark)
            return Published(jars, version, fresh)
        except maven.ArtifactNotFound as exc:
            # Said at once after Maven's "resolving ...3.5.9", so the next "resolving
            # ...3.5.8" does not read as a retry. A remembered answer ran no Maven and
            # printed nothing: saying it on every session start would be noise.
            why = _not_found_reason(exc)
            skipped.append(f"{coordinate} ({why})")
            fresh = fresh or not exc.remembered
            if not quiet and not exc.remembered:
                print(f"kafkatest: skipped {coordinate}: {why}", file=sys.stderr, flush=True)
    return "; ".join(skipped)


def _not_found_reason(error: maven.ArtifactNotFound) -> str:
    """Why a connector version was skipped, in a clause: Maven's answer, first line.

    The answer may be one remembered from an earlier run (`maven.NOT_FOUND_TTL_S`);
    the clause says so, since no Maven ran this time.
    """
    said = str(error).splitlines()[0].rstrip(".") if str(error) else "not found"
    return f"{said} (Maven's answer in an earlier run)" if error.remembered else said


#: Spark's own format modules a test may ask for next to the connector.
SPARK_EXTRAS = ("avro", "protobuf")


def requested_spark_extras(names: str | Sequence[str] | None = None) -> list[str]:
    """The extras named (or by ``KAFKATEST_SPARK_EXTRAS=avro,protobuf``), checked."""
    raw = environment("KAFKATEST_SPARK_EXTRAS", "") if names is None else names
    wanted = [n.strip() for n in (raw.split(",") if isinstance(raw, str) else raw) if n.strip()]
    unknown = sorted(set(wanted) - set(SPARK_EXTRAS))
    if unknown:
        raise SetupError(
            f"unknown Spark extra(s) {unknown} (KAFKATEST_SPARK_EXTRAS); choose from {SPARK_EXTRAS}"
        )
    return wanted


def spark_extra_jars(extras: Sequence[str], quiet: bool = False) -> list[Path]:
    """spark-avro / spark-protobuf for the installed PySpark, with their dependencies.

    Maven picks the newest release of the installed major line not newer than PySpark
    (a version range): these modules are sometimes not published for a patch (4.2.0's
    spark-avro is missing from Central), and an earlier release of the line works with
    ``from_avro``/``from_protobuf`` (tests/schema_registry/test_spark_avro.py).
    """
    if not extras:
        return []
    spark = installed_spark()
    major = spark.minor_line[0]
    coordinates = [
        spark_module_coordinate(f"spark-{name}", f"[{major}.0.0,{spark.version}]", spark)
        for name in requested_spark_extras(extras)
    ]
    return without_spark_provided(maven.resolve(coordinates, quiet=quiet), spark)


def kafka_broker_jars(version: str | None = None, quiet: bool = False) -> list[Path]:
    """Apache Kafka's broker and tools (KRaft), to run real Kafka without Docker."""
    override = environment("KAFKATEST_KAFKA_JARS_DIR")
    if override:
        return _jars_in(override)
    return maven.resolve(kafka_broker_coordinates(version), quiet=quiet)
