"""The jars of a Kerberos KDC for tests: Hadoop's MiniKdc (Apache Kerby inside).

Spark starts its delegation token providers only when Hadoop security is on, and then
logs in to a KDC from a keytab before it asks Kafka for a token; a test of that path
needs a KDC. MiniKdc is one from Maven Central with a command-line entry point that
makes the principals and their keytab, so no Java of kafkatest's own is compiled.
Its own module (not `resolve.py`): only the tests of Spark's token path need it.
"""

from __future__ import annotations

from pathlib import Path

from kafkatest.jars import maven

#: Hadoop's MiniKdc: Kerby 2.0.3's SimpleKdcServer behind MiniKdc's `main`
#: (`MiniKdc <workdir> <properties> <keytab> <principal>...`).
MINIKDC_VERSION = "3.4.1"


def minikdc_coordinate(version: str = MINIKDC_VERSION) -> str:
    return f"org.apache.hadoop:hadoop-minikdc:{version}"


def kdc_jars(version: str = MINIKDC_VERSION, quiet: bool = False) -> list[Path]:
    """MiniKdc and its dependencies (26 jars, 4.7 MB), resolved once and cached like
    the broker's jars."""
    return maven.resolve([minikdc_coordinate(version)], quiet=quiet)
