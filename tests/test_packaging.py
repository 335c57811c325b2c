"""What `python -m build` packs is what a user installs: checked from the configuration.

Building a wheel takes a minute, so CI builds one (.ci/run, with `twine check`) and
this fast test checks what decides its contents: the package and its data files are
in, the tests are out, the version is written once, and the metadata a package index
shows (license, supported Pythons) is complete.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.10 line
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_wheel_holds_the_package_and_no_tests() -> None:
    found = pyproject()["tool"]["setuptools"]["packages"]["find"]
    assert found["include"] == ["kafkatest*"]
    assert not any(fnmatch.fnmatch("tests", pattern) for pattern in found["include"])


def test_every_data_file_of_the_package_is_packed() -> None:
    globs = pyproject()["tool"]["setuptools"]["package-data"]["kafkatest"]
    package = ROOT / "kafkatest"
    data = [
        path.relative_to(package).as_posix()
        for path in package.rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts
    ]
    assert data, "kafkatest ships data files (py.typed, Kafka's broker configs)"
    unpacked = [
        name
        for name in data
        if not any(fnmatch.fnmatch(name, g) or fnmatch.fnmatch(name, g.lstrip("*/")) for g in globs)
    ]
    assert not unpacked, f"files the wheel would leave out: {unpacked}"


def test_the_version_is_written_once() -> None:
    project = pyproject()["project"]
    assert "version" not in project and "version" in project["dynamic"]
    dynamic = pyproject()["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "kafkatest.__version__"}
    import kafkatest

    assert re.fullmatch(r"\d+\.\d+\.\d+", kafkatest.__version__)


def test_the_metadata_names_the_license_and_the_supported_pythons() -> None:
    config = pyproject()
    project = config["project"]
    assert project["license"] == "Apache-2.0"  # SPDX: no setuptools deprecation warning
    # The text the expression names, shipped in both distributions (setuptools takes
    # LICEN[CS]E* by default when `license-files` is not set).
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert "LICENSE" in project.get("license-files", ["LICENSE"])
    assert any(r.startswith("setuptools>=77") for r in config["build-system"]["requires"])
    assert project["requires-python"] == ">=3.10"
    for version in ("3.10", "3.11", "3.12"):
        assert f"Programming Language :: Python :: {version}" in project["classifiers"]


def test_ci_builds_the_docs_and_the_distributions() -> None:
    run = (ROOT / ".ci" / "run").read_text()
    for command in ("mkdocs build --strict", "python -m build", "twine check"):
        assert command in run, command
    extras = pyproject()["project"]["optional-dependencies"]
    assert "kafkatest[docs]" in extras["dev"]
    assert not any("xdist" in requirement for requirement in pyproject()["project"]["dependencies"])


def test_the_pyspark_range_is_written_once_and_the_connect_extra_works_on_every_line() -> None:
    """The dependency, the connect extra and `kafkatest doctor` name one range; the extra
    bounds pyarrow below 26, which breaks PySpark 3.5 (NumPy 2 only) and 3.5 and 4.0's
    applyInPandasWithState: `nox -s downstream-<line>` installs each line without a
    constraints file and runs it."""
    from packaging.requirements import Requirement

    from kafkatest.jars.coordinates import SUPPORTED_PYSPARK

    project = pyproject()["project"]
    core = {Requirement(r).name: Requirement(r) for r in project["dependencies"]}
    connect = {
        Requirement(r).name: Requirement(r) for r in project["optional-dependencies"]["connect"]
    }
    assert str(core["pyspark"].specifier) == str(connect["pyspark"].specifier)
    assert set(core["pyspark"].specifier) == set(
        Requirement(f"pyspark{SUPPORTED_PYSPARK}").specifier
    )
    assert "26.0.1" not in connect["pyarrow"].specifier
    assert "25.0.1" in connect["pyarrow"].specifier and "18.0.0" in connect["pyarrow"].specifier
