"""`kafkatest doctor` names a combination of PySpark, pyarrow and NumPy known to break,
with its fix: what pip picks for a project installed without a constraints file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kafkatest.apps.doctor import check_python_packages


@pytest.mark.parametrize(
    ("versions", "says", "fix"),
    [
        (
            {"pyspark": "3.5.9", "pyarrow": "26.0.1", "numpy": "1.26.4"},
            "pyarrow 26.0.1 needs NumPy 2 and NumPy 1.26.4 is installed",
            "pip install 'pyarrow<26'",
        ),
        (
            {"pyspark": "3.5.7", "pyarrow": "20.0.0", "numpy": "2.2.0"},
            "PySpark 3.5.7 requires NumPy < 2",
            "pip install 'numpy<2'",
        ),
        (
            {"pyspark": "4.0.0", "pyarrow": "26.0.1", "numpy": "2.2.0"},
            "PySpark 4.0.0's applyInPandasWithState hands pyarrow's RecordBatch.slice a float",
            "pip install 'pyarrow<26'",
        ),
    ],
)
def test_each_known_bad_combination_is_named_with_its_fix(
    versions: dict[str, str], says: str, fix: str
) -> None:
    check = check_python_packages(versions)
    assert not check.ok
    assert says in check.detail
    assert fix in check.fix


def test_two_combinations_at_once_are_both_named_and_their_fix_given_once() -> None:
    """What `pip install "pyspark==3.5.*" "kafkatest[connect]"` gave before the extra
    bounded pyarrow: 3.5.9, pyarrow 26, NumPy 1.26."""
    check = check_python_packages({"pyspark": "3.5.9", "pyarrow": "26.0.1", "numpy": "1.26.4"})
    assert "needs NumPy 2" in check.detail and "applyInPandasWithState" in check.detail
    assert check.fix == "pip install 'pyarrow<26'"


@pytest.mark.parametrize(
    "versions",
    [
        {"pyspark": "3.5.9", "pyarrow": "25.0.1", "numpy": "1.26.4", "pandas": "2.3.3"},
        {"pyspark": "4.0.1", "pyarrow": "25.0.1", "numpy": "2.4.6"},
        {"pyspark": "4.3.0", "pyarrow": "26.0.1", "numpy": "2.4.6"},
        {"pyspark": "4.2.1"},  # no connect extra: nothing to break
    ],
)
def test_working_sets_pass(versions: dict[str, str]) -> None:
    check = check_python_packages(versions)
    assert check.ok, check.detail
    assert check.detail.endswith("no combination known to break")


def test_the_check_reads_the_installed_metadata(tmp_path: Path) -> None:
    """The versions are the installed distributions' (the metadata first on sys.path
    wins, as for pip), read in a Python of its own: a project whose pip picked pyarrow
    26 beside NumPy 1 sees the line fail (the whole `kafkatest doctor`, which starts
    Java, is run by tests/test_doctor.py)."""
    for name, version in {"pyarrow": "26.0.1", "numpy": "1.26.4"}.items():
        info = tmp_path / f"{name}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from kafkatest.apps.doctor import check_python_packages as c; print(c().line())",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "[FAIL] python packages: " in result.stdout
    assert "pyarrow 26.0.1 needs NumPy 2 and NumPy 1.26.4 is installed" in result.stdout
