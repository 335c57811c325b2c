"""Resolve Maven coordinates to jar files with the ordinary `mvn` client.

A throw-away POM lists the coordinates; `dependency:build-classpath` downloads them
with their transitive dependencies into kafkatest's own local repository, and the
resulting list is written to a manifest so later runs need neither Maven nor network.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from xml.sax.saxutils import escape

from kafkatest._ground.project_files import cache_dir
from kafkatest.config import environment
from kafkatest.errors import SetupError
from kafkatest.jars.progress import DownloadProgress


class ArtifactNotFound(SetupError):
    """Maven answered, but a coordinate does not exist in the repositories it reached."""

    def __init__(self, answer: str, *, remembered: bool = False) -> None:
        super().__init__(answer)
        #: The answer is an earlier run's, kept for `NOT_FOUND_TTL_S`: no Maven ran now.
        self.remembered = remembered


def _pom(coordinates: Sequence[str]) -> str:
    deps = []
    for coordinate in coordinates:
        parts = [escape(p) for p in coordinate.split(":")]
        classifier = ""
        if len(parts) == 5 and parts[2] == "jar":  # Maven's group:artifact:jar:classifier:version
            classifier = f"<classifier>{parts[3]}</classifier>"
            parts = [parts[0], parts[1], parts[4]]
        if len(parts) != 3:
            raise SetupError(
                f"bad Maven coordinate {coordinate!r}: expected group:artifact:version "
                "(or group:artifact:jar:classifier:version)"
            )
        group, artifact, version = parts
        deps.append(
            f"<dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
            f"<version>{version}</version>{classifier}</dependency>"
        )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        "<groupId>kafkatest.resolve</groupId><artifactId>resolve</artifactId><version>1</version>"
        f"<dependencies>{''.join(deps)}</dependencies></project>"
    )


MAVEN_CENTRAL = "https://repo.maven.apache.org/maven2"


def _settings_args(work: Path) -> list[str]:
    """Maven settings: the user's own if they have any, else Central for everything.

    Some POMs (Spark's parent among them) declare extra repositories that are often
    unreachable; routing every repository through one mirror keeps resolution to the
    registry the user can reach. KAFKATEST_MAVEN_REPO_URL names another mirror.
    """
    explicit = environment("KAFKATEST_MAVEN_SETTINGS")
    if explicit:
        return ["-s", explicit]
    url = environment("KAFKATEST_MAVEN_REPO_URL")
    if url is None and (Path.home() / ".m2" / "settings.xml").exists():
        return []
    settings = work / "settings.xml"
    settings.write_text(
        '<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0"><mirrors><mirror>'
        "<id>kafkatest-central</id><mirrorOf>*</mirrorOf>"
        f"<url>{escape(url or MAVEN_CENTRAL)}</url></mirror></mirrors></settings>"
    )
    return ["-s", str(settings)]


def _manifest_path(coordinates: Sequence[str]) -> Path:
    digest = hashlib.sha256("\n".join(coordinates).encode()).hexdigest()[:16]
    return cache_dir() / "manifests" / f"{digest}.json"


def cached_jars(coordinates: Sequence[str]) -> list[Path] | None:
    """The jars of an earlier resolution, if its manifest and every jar are still there."""
    manifest = _manifest_path(coordinates)
    if not manifest.exists():
        return None
    try:
        data = json.loads(manifest.read_text())
    except (OSError, ValueError):
        return None
    jars = [Path(p) for p in data.get("jars", [])]
    if data.get("coordinates") != list(coordinates) or not jars:
        return None
    return jars if all(j.is_file() for j in jars) else None


#: How long "Maven Central has no such artifact" is believed before asking again: a
#: patch release (PySpark 4.2.1's connector) may be published later.
NOT_FOUND_TTL_S = 7 * 24 * 3600


def _not_found_path(coordinates: Sequence[str]) -> Path:
    return _manifest_path(coordinates).with_suffix(".missing")


def _known_missing(coordinates: Sequence[str]) -> str | None:
    """Maven's answer when it recently found no such artifact (so the fallback is instant)."""
    marker = _not_found_path(coordinates)
    try:
        if time.time() - marker.stat().st_mtime > NOT_FOUND_TTL_S:
            return None
        return marker.read_text()
    except OSError:
        return None


def resolve(coordinates: Sequence[str], *, quiet: bool = False) -> list[Path]:
    """Jars for `coordinates` and their runtime dependencies, from cache or Maven.

    A coordinate Maven could not find is remembered for `NOT_FOUND_TTL_S`, so a
    fallback to an earlier patch release costs no Maven run (and no network) later.
    Processes that resolve at once (pytest-xdist workers) take turns on a lock file:
    one runs Maven, the others then find its manifest, which is written whole or not
    at all.
    """
    cached = cached_jars(coordinates)
    if cached is not None:
        return cached
    lock_path = _manifest_path(coordinates).with_suffix(".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            cached = cached_jars(coordinates)  # another process may have finished meanwhile
            if cached is not None:
                return cached
            return _resolve_with_maven(coordinates, quiet=quiet)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _resolve_with_maven(coordinates: Sequence[str], *, quiet: bool) -> list[Path]:
    missing_answer = _known_missing(coordinates)
    if missing_answer is not None:
        raise ArtifactNotFound(missing_answer, remembered=True)
    mvn = shutil.which("mvn")
    if mvn is None:
        raise SetupError(
            "Maven (mvn) is needed once to download Kafka/Spark jars from Maven Central, "
            "and it is not on PATH. Install it (Debian/Ubuntu: apt-get install maven; "
            "macOS: brew install maven), or point KAFKATEST_JARS_DIR at a directory of jars."
        )
    if shutil.which("java") is None:
        raise SetupError("Java is not on PATH: install a JDK 17 (apt-get install openjdk-17-jdk).")
    repo = cache_dir() / "m2"
    repo.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kafkatest-mvn-") as work:
        pom = Path(work) / "pom.xml"
        pom.write_text(_pom(coordinates))
        out = Path(work) / "classpath.txt"
        command = [
            mvn,
            "-B",
            "-f",
            str(pom),
            *_settings_args(Path(work)),
            f"-Dmaven.repo.local={repo}",
            "dependency:build-classpath",
            "-Dmdep.includeScope=runtime",
            f"-Dmdep.outputFile={out}",
        ]
        progress = DownloadProgress(", ".join(coordinates), quiet=quiet)
        log = _run_maven(command, progress)
        if not out.exists():
            missing = [c for c in coordinates if c.split(":")[1] in log and "not found" in log]
            tail = "\n".join(log.splitlines()[-15:])
            if "Could not find artifact" in log or "was not found" in log:
                answer = (
                    f"Maven could not find {', '.join(missing or coordinates)} in the repositories "
                    f"it can reach.\n{tail}"
                )
                _write_whole(_not_found_path(coordinates), answer)
                raise ArtifactNotFound(answer)
            raise SetupError(
                "Maven failed to resolve "
                f"{', '.join(coordinates)}. Check network access to Maven Central (or your "
                f"settings.xml mirror), or set KAFKATEST_JARS_DIR.\n{tail}"
            )
        jars = [Path(p) for p in out.read_text().strip().split(os.pathsep) if p.endswith(".jar")]
    _write_whole(
        _manifest_path(coordinates),
        json.dumps({"coordinates": list(coordinates), "jars": [str(j) for j in jars]}),
    )
    progress.done(jars, cache_dir())
    return jars


def _write_whole(path: Path, text: str) -> None:
    """Write `text` so that a reader sees the old file or the new one, never half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(text)
    os.replace(partial, path)


def _run_maven(command: list[str], progress: DownloadProgress) -> str:
    """Run Maven, feeding its output to `progress`; return the output for error messages."""
    lines: list[str] = []
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line.rstrip())
            progress.feed(line)
    return "\n".join(lines)
