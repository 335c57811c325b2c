"""Class-data-sharing archives for the JVMs kafkatest starts: load a JVM's classes once.

Most of a short JVM's start is loading, verifying and linking classes from jars. JDK 13+
writes the classes a run loaded to an archive when it exits (`-XX:ArchiveClassesAtExit`,
dynamic AppCDS) and maps them from it in later runs (`-XX:SharedArchiveFile`). Measured
here (2 cores, JDK 17, Kafka 4.1.1, medians of alternating runs): one of Kafka's tools
(`kafka-topics --list`) took 1.45 s and 1.85 CPU-seconds without an archive and 0.62 s
and 0.92 CPU-seconds with one; a Kafka broker from its storage format to its first
metadata answer took 4.38 s without and 2.34 s with.

Each kind of JVM (Kafka's tools, Kafka's broker, Spark's driver) has its own archive,
named by a hash of what decides its contents and whether a JVM maps it: the Java
build, every jar by path, size and time, and the JVM flags. A changed jar set or Java
gets a new archive. A JVM that finds none writes its own part file as it exits; the
part is then checked (a JVM started with ``-Xshare:on`` and the part, which fails on
an archive it would not map, where a truncated one would crash a real run) and moved
into place. Concurrent writers (xdist workers) each write their own part; whichever
moves last wins, and both are equivalent. The JVM's own messages about archives are
turned off (`-Xlog:cds*=off`): they would reach the user's terminal or a tool's
captured stderr. A JVM that cannot map an archive runs without it, only slower.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kafkatest._ground.tempdirs import process_alive
from kafkatest.config import environment
from kafkatest.jars.coordinates import kafka_version

#: Silences the JVM's unified-logging messages tagged cds (warnings go to stdout).
QUIET = "-Xlog:cds*=off"
#: The first Java feature release with dynamic archives (JEP 350).
FIRST_JAVA = 13


def cds_dir() -> Path:
    """Where archives are kept: beside the Maven cache, one folder for every kind."""
    from kafkatest.jars.maven import cache_dir

    return cache_dir() / "cds"


def java_build(binary: str | Path) -> str | None:
    """The Java build of `binary` (its ``release`` file's runtime version); None when
    unknown or older than Java 13, which has no dynamic archives."""
    release: dict[str, str] = {}
    with contextlib.suppress(OSError):
        home = Path(binary).resolve().parent.parent
        for line in (home / "release").read_text().splitlines():
            key, _, value = line.partition("=")
            release[key.strip()] = value.strip().strip('"')
    version = release.get("JAVA_RUNTIME_VERSION") or release.get("JAVA_VERSION", "")
    feature = version.split(".", 1)[0].split("+", 1)[0].split("-", 1)[0]
    if not feature.isdigit() or int(feature) < FIRST_JAVA:
        return None
    return version


def stamp(path: Path) -> str:
    """A jar's size and modification time: a replaced jar changes the archive's name."""
    try:
        stat = path.stat()
    except OSError:
        return "missing"
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def archive_name(kind: str, parts: Iterable[str]) -> str:
    """``<kind>-<hash of parts>``: what decides an archive's contents, in one name."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() + b"\0")
    return f"{kind}-{digest.hexdigest()[:16]}"


def maps(archive: Path, java: str, flags: Sequence[str], class_path: str) -> bool:
    """Whether a JVM like the one that wrote it maps `archive` (``-Xshare:on`` fails
    otherwise; a truncated archive crashes it, here instead of in a real run)."""
    with tempfile.TemporaryDirectory(prefix="kafkatest-cds-") as scratch:
        command = [
            java,
            *flags,
            "-Xshare:on",
            f"-XX:SharedArchiveFile={archive}",
            f"-XX:ErrorFile={scratch}/hs_err.log",
            "-cp",
            class_path,
            "-version",
        ]
        try:
            done = subprocess.run(command, cwd=scratch, capture_output=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            return False
    return done.returncode == 0


def remove_older(folder: Path, name: str) -> None:
    """Remove the other archives of this kind: a changed jar set or Java made them stale."""
    kind = name.rsplit("-", 1)[0] + "-"
    for other in folder.glob(f"{kind}*.jsa"):
        if other.stem != name:
            with contextlib.suppress(OSError):
                other.unlink()


@dataclass(frozen=True)
class JvmArchive:
    """The archive options of one JVM run, and what to do once it has exited."""

    #: Java options to add before the main class.
    java_options: tuple[str, ...] = ()
    #: The part this run writes as it exits (None: it maps an archive, or has none).
    part: Path | None = None
    #: Where the part goes once checked.
    archive: Path | None = None
    java: str = ""
    flags: tuple[str, ...] = ()
    class_path: str = ""

    def exited(self) -> None:
        """After the JVM exited: move a part it wrote into place if a JVM maps it.

        Never raises: an archive only makes later starts quicker."""
        part, archive = self.part, self.archive
        if part is None or archive is None:
            return
        try:
            written = part.exists() and part.stat().st_size > 0
            if written and maps(part, self.java, self.flags, self.class_path):
                os.replace(part, archive)
                remove_older(archive.parent, archive.stem)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                part.unlink()


def kafka_jvm_archive(
    kind: str, version: str | None, java: str, flags: Sequence[str], jars: Sequence[Path]
) -> JvmArchive:
    """The archive of one kind of Kafka JVM (``broker``, ``format``, ``tools``) of
    `version` (None: kafkatest's), where `KAFKATEST_KAFKA_CDS` says."""
    where = environment("KAFKATEST_KAFKA_CDS", "auto")
    return jvm_archive(f"kafka-{kind}-{version or kafka_version()}", java, flags, jars, where)


def jvm_archive(
    kind: str, java: str, flags: Sequence[str], jars: Sequence[Path], where: str
) -> JvmArchive:
    """The archive options for a JVM of `kind` about to run `jars` with `flags`.

    `where` is the setting: ``off``, ``auto`` (the cache directory) or a directory.
    Nothing when turned off or on Java before 13; the archive when one is there; else
    the options that make this run write one. Never raises."""
    if where == "off":
        return JvmArchive()
    try:
        binary = shutil.which(java) or java
        build = java_build(binary)
        if build is None:
            return JvmArchive()
        class_path = os.pathsep.join(str(jar) for jar in jars)
        # The heap's size neither changes what a run loads nor stops a JVM mapping the
        # archive: a cluster's 512 MB nodes share the 1 GB broker's archive.
        deciding = [f for f in flags if not f.startswith(("-Xmx", "-Xms", "-Xss"))]
        name = archive_name(
            kind,
            (str(Path(binary).resolve()), build, *(f"{j}:{stamp(j)}" for j in jars), *deciding),
        )
        folder = cds_dir() if where == "auto" else Path(where).expanduser()
        archive = folder / f"{name}.jsa"
        if archive.exists():
            return JvmArchive((QUIET, f"-XX:SharedArchiveFile={archive}"))
        folder.mkdir(parents=True, exist_ok=True)
        _remove_stale_parts(folder)
        part = folder / f"{name}.{os.getpid()}-{os.urandom(4).hex()}.part"
        return JvmArchive(
            (QUIET, f"-XX:ArchiveClassesAtExit={part}"),
            part,
            archive,
            binary,
            tuple(flags),
            class_path,
        )
    except Exception:
        return JvmArchive()


def _remove_stale_parts(folder: Path) -> None:
    """Parts whose writer's Python process is gone (killed before it could check them),
    of every kind: an archive is 20-50 MB."""
    for part in folder.glob("kafka-*.part"):
        pid = part.name.rsplit(".", 2)[-2].split("-", 1)[0]
        if pid.isdigit() and not process_alive(int(pid)):
            with contextlib.suppress(OSError):
                part.unlink()
