"""`kafkatest doctor`: check what a first run needs, and say what to fix.

Each check is a plain function returning a `Check`; the command prints one line per
check and exits 1 if any failed. It downloads nothing unless asked (`--resolve`),
so it is safe to run offline, on a CI machine, or before the first test.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from kafkatest.errors import KafkaTestError

MIN_JAVA = 17


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    #: What to do about it (empty when ok).
    fix: str = ""

    def line(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        text = f"[{mark}] {self.name}: {self.detail}"
        return text if self.ok else f"{text}\n       fix: {self.fix}"


def check_java() -> Check:
    java = shutil.which("java")
    if java is None:
        return Check(
            "java",
            False,
            "not on PATH (Spark and the kafka backend run on the JVM)",
            f"install a JDK {MIN_JAVA}+ (Debian/Ubuntu: apt-get install openjdk-17-jdk; "
            "macOS: brew install openjdk@17) and put its bin/ on PATH",
        )
    try:
        said = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check("java", False, f"{java} did not run: {exc}", "reinstall the JDK")
    match = re.search(r'version "(\d+)(?:\.(\d+))?', said)
    major = int(match.group(1)) if match else 0
    if major == 1 and match and match.group(2):
        major = int(match.group(2))  # "1.8.0" is Java 8
    if major < MIN_JAVA:
        return Check(
            "java",
            False,
            f"{java} is Java {major or '?'}",
            f"install a JDK {MIN_JAVA}+ and put it first on PATH (or set JAVA_HOME)",
        )
    return Check("java", True, f"Java {major} at {java}")


def check_pyspark() -> Check:
    from kafkatest.jars.coordinates import (
        INSTALL_PYSPARK,
        NEWEST_LINE,
        OLDEST_LINE,
        SUPPORTED_PYSPARK,
        installed_spark,
    )

    try:
        spark = installed_spark()
    except KafkaTestError as exc:
        return Check("pyspark", False, str(exc), INSTALL_PYSPARK)
    if not OLDEST_LINE <= spark.minor_line <= NEWEST_LINE:
        return Check(
            "pyspark",
            False,
            f"PySpark {spark.version} is outside kafkatest's range ({SUPPORTED_PYSPARK})",
            INSTALL_PYSPARK,
        )
    return Check("pyspark", True, f"PySpark {spark.version} (Scala {spark.scala_binary})")


@dataclass(frozen=True)
class KnownBad:
    """A combination of installed versions that breaks PySpark, seen on this project's CI."""

    #: Version ranges (PEP 440 specifiers) per distribution; all must hold.
    when: dict[str, str]
    what: str
    fix: str


#: What pip may pick when nothing bounds it (no constraints file): each one broke a run.
KNOWN_BAD = (
    KnownBad(
        {"pyarrow": ">=26", "numpy": "<2"},
        "pyarrow {pyarrow} needs NumPy 2 and NumPy {numpy} is installed: importing pyarrow "
        "fails, and PySpark then says 'PyArrow >= 4.0.0 must be installed' (warm mode, "
        "Spark Connect and pandas UDFs stop)",
        "pip install 'pyarrow<26'",
    ),
    KnownBad(
        {"pyspark": "<4.0", "numpy": ">=2"},
        "PySpark {pyspark} requires NumPy < 2 (its pandas and Arrow conversions use what "
        "NumPy 2 removed), and NumPy {numpy} is installed",
        "pip install 'numpy<2'",
    ),
    KnownBad(
        {"pyspark": "<4.1", "pyarrow": ">=26"},
        "PySpark {pyspark}'s applyInPandasWithState hands pyarrow's RecordBatch.slice a "
        "float, which pyarrow {pyarrow} refuses (TypeError in the Python worker; 25 takes it)",
        "pip install 'pyarrow<26'",
    ),
)


def check_python_packages(versions: dict[str, str] | None = None) -> Check:
    """Whether the installed PySpark, pyarrow, NumPy and pandas are a combination known to
    break (`KNOWN_BAD`). Versions come from the packages' metadata: importing pyarrow is
    what fails in the first of them."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    installed = _installed_versions() if versions is None else versions
    problems, fixes = [], []
    for bad in KNOWN_BAD:
        try:
            hit = all(
                name in installed and Version(installed[name]) in SpecifierSet(spec)
                for name, spec in bad.when.items()
            )
        except InvalidVersion:
            continue
        if hit:
            problems.append(bad.what.format(**installed))
            if bad.fix not in fixes:
                fixes.append(bad.fix)
    shown = ", ".join(f"{name} {installed[name]}" for name in _WATCHED if name in installed)
    if problems:
        return Check("python packages", False, f"{shown}: {'; '.join(problems)}", "; ".join(fixes))
    return Check("python packages", True, f"{shown}: no combination known to break")


#: The distributions `check_python_packages` reads.
_WATCHED = ("pyspark", "pyarrow", "numpy", "pandas")


def _installed_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in _WATCHED:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


def check_cache() -> Check:
    from kafkatest.jars.maven import cache_dir

    cache = cache_dir()
    try:
        cache.mkdir(parents=True, exist_ok=True)
        probe = cache / f".doctor-{os.getpid()}"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        return Check(
            "cache",
            False,
            f"{cache} is not writable: {exc}",
            "set KAFKATEST_CACHE_DIR to a writable directory",
        )
    free = shutil.disk_usage(cache).free
    if free < 1_000_000_000:
        return Check(
            "cache",
            False,
            f"{cache}: only {free // 1_000_000} MB free (the jars take ~600 MB)",
            "free disk space or set KAFKATEST_CACHE_DIR elsewhere",
        )
    return Check("cache", True, f"{cache} (writable, {free // 1_000_000_000} GB free)")


def check_jars(which: str, resolve: bool) -> Check:
    """Whether the connector (or Kafka's) jars are cached; with `resolve`, fetch them.

    Either way the jars are counted as the resolver's summary line counts them (the
    whole class path Maven resolved, `jar_summary`): the doctor once said "4 jars"
    (those left after dropping what PySpark ships) where the resolver had just said
    "13 jars (63.5 MB)", and a newcomer could not tell which was right. The
    connector's line adds how many of them Spark is given.
    """
    from kafkatest.jars import kafka_broker_jars, spark_connector_jars
    from kafkatest.jars.coordinates import (
        connector_release,
        connector_version_candidates,
        installed_spark,
        is_line_fallback,
        kafka_broker_coordinates,
        spark_connector_coordinate,
    )
    from kafkatest.jars.maven import cached_jars
    from kafkatest.jars.progress import jar_summary
    from kafkatest.jars.resolve import line_fallback_notice, without_spark_provided

    name = "connector jars" if which == "spark" else "kafka backend jars"
    try:
        if which == "spark":
            spark = installed_spark()
            candidates = [
                [spark_connector_coordinate(v, spark)] for v in connector_version_candidates(spark)
            ]
        else:
            candidates = [kafka_broker_coordinates()]

        def described(state: str) -> Check | None:
            for coordinates in candidates:
                jars = cached_jars(coordinates)
                if jars is None:
                    continue
                if which != "spark":
                    return Check(
                        name, True, f"{', '.join(coordinates)}: {jar_summary(jars)} {state}"
                    )
                # A line's range (`[4.2.0],[4.2.1,4.3.0)`) is shown as the release it found.
                release = connector_release(jars, spark)
                shown = spark_connector_coordinate(release, spark) if release else coordinates[0]
                given = len(without_spark_provided(jars, spark))
                detail = (
                    f"{shown}: {jar_summary(jars)} {state}, {given} of them given to Spark "
                    "(PySpark ships the rest)"
                )
                if is_line_fallback(coordinates[0].rsplit(":", 1)[1]):
                    detail += f"; {line_fallback_notice(spark, jars)}"
                return Check(name, True, detail)
            return None

        found = described("cached")
        if found is not None:
            return found
        if not resolve:
            maven = shutil.which("mvn")
            return Check(
                name,
                maven is not None,
                f"not cached yet ({', '.join(candidates[0])}); the first run downloads them"
                + (" with Maven" if maven else ", and Maven (mvn) is not on PATH"),
                "install Maven (apt-get install maven / brew install maven), or point "
                "KAFKATEST_SPARK_JARS_DIR / KAFKATEST_KAFKA_JARS_DIR at a directory of jars",
            )
        jars = spark_connector_jars() if which == "spark" else kafka_broker_jars()
        return described("resolved") or Check(name, True, f"resolved: {jar_summary(jars)}")
    except KafkaTestError as exc:
        return Check(name, False, str(exc).splitlines()[0], "see the message above")


def check_ports() -> Check:
    """Brokers and Spark listen on free loopback ports chosen by the OS."""
    try:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
    except OSError as exc:
        return Check(
            "loopback ports",
            False,
            f"cannot listen on 127.0.0.1: {exc}",
            "allow listening on loopback (a sandbox or firewall rule forbids it)",
        )
    return Check("loopback ports", True, f"127.0.0.1 accepts listeners (e.g. port {port})")


def run_checks(resolve: bool = False) -> list[Check]:
    checks: list[Callable[[], Check]] = [
        check_java,
        check_pyspark,
        check_python_packages,
        check_cache,
        lambda: check_jars("spark", resolve),
        lambda: check_jars("kafka", resolve),
        check_ports,
    ]
    return [check() for check in checks]


def run_doctor(resolve: bool = False) -> int:
    results = run_checks(resolve)
    for result in results:
        print(result.line())
    failed = [r for r in results if not r.ok]
    print(
        f"\nkafkatest doctor: {len(results) - len(failed)} of {len(results)} checks passed"
        + ("" if not failed else "; fix the lines marked FAIL")
    )
    return 1 if failed else 0
