"""One progress line while Maven downloads, one summary line when the jars are known.

Maven prints a line per file it fetches, its own plugins (maven-clean-plugin,
plexus, ...) among them; a newcomer reads those as the connector's jars. So the
line shown while Maven runs only counts files and bytes (redrawn in place on a
terminal), and the summary counts just the jars that end up on the class path.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

#: ``Downloaded from central: https://.../kafka-clients-3.9.2.jar (8.2 MB at 4.1 MB/s)``
_DOWNLOADED = re.compile(r"Downloaded from [^:]+: (\S+) \(([\d.]+) (B|kB|MB|GB)")
_UNIT = {"B": 1, "kB": 1000, "MB": 1000**2, "GB": 1000**3}


def human_bytes(count: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if count < 1000 or unit == "GB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    raise AssertionError("unreachable")


def jar_summary(jars: Sequence[Path]) -> str:
    """``13 jars (63.5 MB)``: how the resolver and `kafkatest doctor` both count a jar set."""
    size = sum(jar.stat().st_size for jar in jars if jar.is_file())
    return f"{len(jars)} jars ({human_bytes(size)})"


class DownloadProgress:
    """Reads Maven's output; shows files and bytes fetched so far on one line."""

    def __init__(self, what: str, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.what = what
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.files = 0
        self.bytes = 0.0
        self._live = not quiet and self.stream.isatty()
        if not quiet:
            self.stream.write(f"kafkatest: resolving {what} with Maven (first run only)\n")
            self.stream.flush()

    def feed(self, line: str) -> None:
        match = _DOWNLOADED.search(line)
        if match is None:
            return
        self.files += 1
        self.bytes += float(match.group(2)) * _UNIT[match.group(3)]
        if self._live:
            self.stream.write(
                f"\rkafkatest:   downloading: {self.files} files, {human_bytes(self.bytes)}   "
            )
            self.stream.flush()

    def done(self, jars: Sequence[Path], cache: Path) -> None:
        """The summary: the class path's jars and their size, and where they are kept."""
        if self.quiet:
            return
        if self._live:
            self.stream.write("\r" + " " * 60 + "\r")
        self.stream.write(
            f"kafkatest: resolved {self.what}: {jar_summary(jars)} on the "
            f"class path, cached in {cache}; later runs need no Maven\n"
        )
        self.stream.flush()
