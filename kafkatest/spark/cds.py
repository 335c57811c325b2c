"""A class-data-sharing archive for the Spark driver's JVM: its classes loaded once, ever.

A cold Spark start is mostly the JVM loading, verifying and linking some 17,000
classes (Spark's, Scala's, the connector's, the Kafka clients'). JDK 13+ can write
the classes a run loaded to an archive when it exits (`-XX:ArchiveClassesAtExit`,
dynamic AppCDS) and map them from it in later runs (`-XX:SharedArchiveFile`). Measured
here (2 cores, JDK 17, PySpark 4.2.1): a fresh process to a session with the connector
that has run a job took 14.1 s without and 6.9 s with the archive, side by side
(BENCHMARKS.md has the bench's figures).

The archive is made once per PySpark version, Java build and jar set: the first
session start with none passes `ArchiveClassesAtExit`, its JVM writes the archive as
it exits (after the run's result), and the next start checks it (a JVM started with
``-Xshare:on`` and the archive, which fails on an archive it would not map; a
truncated one would crash the driver instead of being ignored) and moves it into
place; from then on every start maps it. Its name holds a hash of everything the JVM
checks or that changes the classes (PySpark's version and jars, the Java build, the
connector's jars, the JVM flags), so a changed jar set or Java gets a new archive and
the old one of that PySpark version is removed. It holds what the run that wrote it
loaded (a later start loads any other class from its jar, as without an archive).
The JVM's own messages about the
archive (several hundred "Skipping ... Signed JAR" warnings while it writes it) are
turned off: they would reach the user's terminal. ``KAFKATEST_SPARK_CDS=off`` turns
it all off.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafkatest._ground.tempdirs import process_alive
from kafkatest.config import environment
from kafkatest.jars.class_archive import (
    QUIET,
    archive_name,
    cds_dir,
    java_build,
    maps,
    remove_older,
    stamp,
)


@dataclass(frozen=True)
class Archive:
    """What a session start does about the archive: the Java options to add, and, when
    this start writes the archive, the claim to complete once its JVM is up."""

    java_options: tuple[str, ...] = ()
    claim: Path | None = None

    def started(self, jvm: Any) -> None:
        """Note the JVM that will write the archive (its pid, start time and class
        path), so that a later start knows when it is done and can check it."""
        if self.claim is None or jvm is None:
            return
        try:
            pid = int(jvm.java.lang.ProcessHandle.current().pid())
            record = {
                "jvm_pid": pid,
                "jvm_started": _start_time(pid),
                "class_path": str(jvm.java.lang.System.getProperty("java.class.path")),
                "java": str(Path(str(jvm.java.lang.System.getProperty("java.home"))) / "bin/java"),
                # -Xmx, the collector, --add-opens...: what the check's JVM runs with
                "flags": [
                    str(flag)
                    for flag in jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
                    .getInputArguments()
                    .toArray()
                    if not str(flag).startswith(("-XX:ArchiveClassesAtExit", "-D"))
                ],
            }
            self.claim.write_text(json.dumps(record))
        except Exception:  # the archive is an optimisation: never fail a session for it
            with contextlib.suppress(OSError):
                self.claim.unlink()


def driver_archive(settings: Mapping[str, str], jvm_flags: Sequence[str]) -> Archive:
    """The archive options for a driver JVM about to start with `settings`.

    Nothing when turned off, when the JVM is already up (PySpark reuses its gateway's
    JVM), or when Java is older than 13 or not found; the archive's options when a
    checked archive is there; the options that write it when nobody else is writing
    it. Never raises: a start without the archive is only slower.
    """
    where = environment("KAFKATEST_SPARK_CDS", "auto")
    if where == "off":
        return Archive()
    try:
        from pyspark import SparkContext

        if SparkContext._gateway is not None:
            return Archive()
        java = _java()
        if java is None:
            return Archive()
        name = _archive_name(settings, jvm_flags, java)
        folder = cds_dir() if where == "auto" else Path(where).expanduser()
        archive = folder / f"{name}.jsa"
        _forget_abandoned(folder, name)
        if not archive.exists():
            _finish_a_build(folder, name)
        if archive.exists():
            return Archive((QUIET, f"-XX:SharedArchiveFile={archive}"))
        claim = _claim(folder, name)
        if claim is None:
            return Archive()
        part = folder / f"{name}.part"
        with contextlib.suppress(OSError):
            part.unlink()
        return Archive((QUIET, f"-XX:ArchiveClassesAtExit={part}"), claim)
    except Exception:
        return Archive()


def _java() -> tuple[Path, str] | None:
    """The java Spark's launcher runs (``$JAVA_HOME/bin/java``, else the one on PATH)
    and its build (the ``release`` file's runtime version); None below Java 13."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not found or not Path(found).exists():
        return None
    binary = Path(found).resolve()
    version = java_build(binary)
    return None if version is None else (binary, version)


def _archive_name(
    settings: Mapping[str, str], jvm_flags: Sequence[str], java: tuple[Path, str]
) -> str:
    """``spark-<version>-<hash>``: the hash of what decides the archive's contents and
    whether the JVM maps it (every jar by path, size and time; Java's build; the flags)."""
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    jars = sorted((spark_home / "jars").glob("*.jar"))
    jars += [Path(j) for j in settings.get("spark.jars", "").split(",") if j]
    binary, version = java
    return archive_name(
        f"spark-{pyspark.__version__}",
        (
            pyspark.__version__,
            str(binary),
            version,
            *(f"{j}:{stamp(j)}" for j in jars),
            settings.get("spark.driver.extraClassPath", ""),
            settings.get("spark.driver.memory", ""),
            *jvm_flags,
        ),
    )


def _claim(folder: Path, name: str) -> Path | None:
    """Become the one start that writes this archive (an exclusive claim file), or
    None while another process holds the claim."""
    folder.mkdir(parents=True, exist_ok=True)
    claim = folder / f"{name}.building"
    try:
        descriptor = os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return None
    with os.fdopen(descriptor, "w") as out:
        out.write(json.dumps({"python_pid": os.getpid(), "claimed": time.time()}))
    return claim


def _finish_a_build(folder: Path, name: str) -> None:
    """If the JVM that was to write this archive is gone, check what it wrote and move
    it into place, or forget it; a claim whose JVM never started is forgotten too."""
    claim = folder / f"{name}.building"
    part = folder / f"{name}.part"
    try:
        record = json.loads(claim.read_text())
    except (OSError, ValueError):
        return
    if "jvm_pid" not in record:
        if _alive(int(record.get("python_pid", 0)), None):
            return  # that session is still starting
    elif _alive(record["jvm_pid"], record.get("jvm_started")):
        return  # still running, or still writing the archive as it exits
    try:
        if "jvm_pid" in record and part.exists() and _maps(part, record):
            os.replace(part, folder / f"{name}.jsa")
            remove_older(folder, name)
    finally:
        for leftover in (part, claim):
            with contextlib.suppress(OSError):
                leftover.unlink()


def _forget_abandoned(folder: Path, name: str) -> None:
    """Remove the claims and parts of other archives whose writer is gone.

    Only a start with the same name finishes a build, and a virtualenv made anew (a
    CI checkout's nox sessions) changes the name: without this, each left a part of
    150-200 MB behind for good (11 GB in this machine's cache before it was found)."""
    for claim in folder.glob("spark-*.building"):
        other = claim.name.removesuffix(".building")
        if other == name:
            continue
        try:
            record = json.loads(claim.read_text())
        except (OSError, ValueError):
            continue
        if _alive(int(record.get("python_pid", 0)), None) or _alive(
            int(record.get("jvm_pid", 0)), record.get("jvm_started")
        ):
            continue
        for leftover in (folder / f"{other}.part", claim):
            with contextlib.suppress(OSError):
                leftover.unlink()


def _maps(part: Path, record: Mapping[str, Any]) -> bool:
    """Whether a JVM like the driver that wrote it maps the archive."""
    return maps(part, record["java"], record.get("flags", ()), record["class_path"])


def _start_time(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _alive(pid: int, started: str | None) -> bool:
    """Whether `pid` runs and (when known) is the same process that started then."""
    if pid <= 0 or not process_alive(pid):
        return False
    return started is None or _start_time(pid) in (started, None)
