"""`kafkatest pytest` prints no warning a plain `pytest` run does not, with kafkatest
installed as a user installs it (a wheel: pytest then marks the plugin's package for
assertion rewriting, and the fork server had imported it first)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv seeing this environment's packages, with kafkatest installed in it
    from a wheel (not editable)."""
    venv = tmp_path_factory.mktemp("wheel-install") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", str(ROOT)],
        check=True,
        timeout=600,
    )
    return venv


def test_a_forked_run_warns_no_more_than_a_plain_one(installed: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    (project / "pytest.ini").write_text("[pytest]\nspark_remote = off\n")
    env_cache = {"KAFKATEST_CACHE_DIR": str(tmp_path / "cache")}
    import os

    env = {**os.environ, **env_cache}
    runs = {}
    for name, command in (
        ("plain", [str(installed / "bin" / "python"), "-m", "pytest"]),
        ("forked", [str(installed / "bin" / "kafkatest"), "pytest"]),
    ):
        for _ in range(2):  # the second forked run is served by the running fork server
            done = subprocess.run(
                [*command, "-p", "no:cacheprovider", "-q"],
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        assert done.returncode == 0, done.stdout + done.stderr
        runs[name] = done.stdout + done.stderr
    subprocess.run(
        [str(installed / "bin" / "kafkatest"), "pytest-server", "stop"],
        env=env,
        timeout=60,
        check=False,
    )
    assert "warning" not in runs["plain"].lower()
    assert "PytestAssertRewriteWarning" not in runs["forked"], runs["forked"]
    assert "warning" not in runs["forked"].lower(), runs["forked"]
